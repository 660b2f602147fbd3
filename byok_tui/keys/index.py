"""The key index: what the store holds beside the keys themselves, in one entry.

A keyring cannot list its entries, so the labels of each provider's keys are kept here, in
order (the order failover tries them), with the commands that print keys (a command is
stored, never the key it prints) and the providers whose failover is on. One entry, read
in one go: the app reads it at start-up with the keys. It never holds a key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from byok_tui.errors import ByokError
from byok_tui.keys.base import INDEX_ENTRY, KeyStore, KeyStoreError

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
        return json.dumps({k: v for k, v in data.items() if v}, sort_keys=True)


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
    store.set_text(INDEX_ENTRY, index.to_text())


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
