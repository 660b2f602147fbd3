"""The key index: what the store holds beside the keys themselves, in one entry.

A keyring cannot list its entries, so the labels of each provider's keys are kept here, in
order (the order failover tries them), with the commands that print keys (a command is
stored, never the key it prints) and the providers whose failover is on. One entry, read
in one go: the app reads it at start-up with the keys. It never holds a key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from byok_tui.core.errors import ByokError
from byok_tui.keys.base import DEFAULT_LABEL, INDEX_ENTRY, KeyStore, KeyStoreError, entry_name

LONGEST_COMMAND = 1000


@dataclass(slots=True)
class KeyIndex:
    # provider id -> labels of its labelled keys, in the order they were added
    labels: dict[str, list[str]] = field(default_factory=dict)
    # provider id -> label ("" for the default key) -> the command that prints that key
    commands: dict[str, dict[str, str]] = field(default_factory=dict)
    failover: list[str] = field(default_factory=list)  # provider ids with failover on

    def labels_of(self, provider_id: str) -> list[str]:
        return list(self.labels.get(provider_id, []))

    def command(self, provider_id: str, label: str = "") -> str | None:
        return self.commands.get(provider_id, {}).get(label)

    def failover_on(self, provider_id: str) -> bool:
        return provider_id in self.failover

    def to_text(self) -> str:
        data = {"labels": self.labels, "commands": self.commands, "failover": self.failover}
        kept = {k: v for k, v in data.items() if v}
        return json.dumps(kept, sort_keys=True) if kept else ""  # "": the entry is removed


def read_index(store: KeyStore) -> KeyIndex:
    """The index as stored; an empty one when there is none. A damaged index is reported
    (KeyStoreError), never replaced."""
    text = store.get_text(INDEX_ENTRY)
    return parse_index(text) if text else KeyIndex()


def parse_index(text: str) -> KeyIndex:
    try:
        data = json.loads(text)
        labels = {str(p): [str(x) for x in ls] for p, ls in data.get("labels", {}).items()}
        commands = {
            str(p): {str(label): str(c) for label, c in cs.items()}
            for p, cs in data.get("commands", {}).items()
        }
        failover = [str(p) for p in data.get("failover", [])]
    except (ValueError, AttributeError, TypeError):
        raise KeyStoreError(
            f"the key index ({INDEX_ENTRY}) is not what byok-tui writes",
            remedy=f"Remove the {INDEX_ENTRY} entry, then set labelled keys and key commands "
            "again; the keys themselves are untouched.",
        ) from None
    return KeyIndex(labels, commands, failover)


def write_index(store: KeyStore, index: KeyIndex) -> None:
    """Save the index, when it changed (a key set without labels or commands leaves the store
    as it was)."""
    text = index.to_text()
    if text != read_index(store).to_text():
        store.set_text(INDEX_ENTRY, text)


def check_command(raw: str) -> str:
    """A key command as saved: one line of printable text, trimmed."""
    command = raw.strip()
    if not command:
        raise ByokError("no command was given; nothing was changed")
    if len(command) > LONGEST_COMMAND or any(not c.isprintable() for c in command):
        raise ByokError(
            "a key command is one line of printable text, at most 1,000 characters",
            remedy="Give the command as you would type it in a shell, on one line.",
        )
    return command


def slot_of(label: str) -> str:
    """Where a label's command is kept in the index: "" for the default key."""
    return "" if label == DEFAULT_LABEL else label


def save_key(
    store: KeyStore, entry: str, provider_id: str, label: str, *, key: str = "", command: str = ""
) -> None:
    """Store a provider's key (`key`) or the command that prints it (`command`), under the
    default entry or a label: one replaces the other, and a label joins the index."""
    index = read_index(store)
    slot = slot_of(label)
    commands = index.commands.setdefault(provider_id, {})
    if command:
        commands[slot] = check_command(command)
        store.delete(entry)  # the command replaces a stored key: one source per key
    else:
        commands.pop(slot, None)
        store.set(entry, key)
    labels = index.labels.setdefault(provider_id, [])
    if slot and slot not in labels:
        labels.append(slot)
    _tidy(index)
    write_index(store, index)


def remove_key(store: KeyStore, entry: str, provider_id: str, label: str) -> bool:
    """Remove a key, its command and its label; True when there was any."""
    removed = store.delete(entry)
    index = read_index(store)
    slot = slot_of(label)
    removed = index.commands.get(provider_id, {}).pop(slot, None) is not None or removed
    removed = slot in index.labels.get(provider_id, []) or removed
    index.labels[provider_id] = [x for x in index.labels.get(provider_id, []) if x != slot]
    _tidy(index)
    write_index(store, index)
    return removed


def stored_keys(store: KeyStore, provider_ids: list[str]) -> dict[str, str]:
    """Every key the store holds now for `provider_ids` (default and labelled entries, in one
    read where the backend allows), each remembered by the redaction layer as it is read."""
    labels = read_index(store).labels
    entries = [entry_name(p) for p in provider_ids]
    entries += [entry_name(p, label) for p in provider_ids for label in labels.get(p, [])]
    return store.get_many(entries)


def kept_for(store: KeyStore, provider_id: str) -> list[str]:
    """What the store keeps for `provider_id`, in words (never any of a key): its stored key,
    its key command, its labelled keys."""
    index = read_index(store)
    found = []
    if store.get(entry_name(provider_id)):
        found.append("the stored key")
    if index.command(provider_id):
        found.append("a key command")
    labels = index.labels_of(provider_id)
    if labels:
        found.append(f"labelled keys {', '.join(labels)}")
    return found


def forget_provider(store: KeyStore, provider_id: str) -> list[str]:
    """Remove every key, key command and label kept for `provider_id`, and its failover: a
    provider defined anew under that id inherits none of them. What was there, in words."""
    found = kept_for(store, provider_id)
    index = read_index(store)
    for label in [DEFAULT_LABEL, *index.labels_of(provider_id)]:
        store.delete(entry_name(provider_id, label))
    index.labels.pop(provider_id, None)
    index.commands.pop(provider_id, None)
    index.failover = [p for p in index.failover if p != provider_id]
    write_index(store, index)
    return found


def set_failover(store: KeyStore, provider_id: str, on: bool) -> None:
    index = read_index(store)
    index.failover = [p for p in index.failover if p != provider_id] + ([provider_id] if on else [])
    write_index(store, index)


def _tidy(index: KeyIndex) -> None:
    index.labels = {p: found for p, found in index.labels.items() if found}
    index.commands = {p: found for p, found in index.commands.items() if found}
