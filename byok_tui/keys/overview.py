"""The state of every provider's key at a glance: what `keys list` and the app show.

Reads the store once for all providers, so that every key's state is known at start-up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from byok_tui.core.key_records import KeyOverview, KeySource, KeyStatus, LabelledKey
from byok_tui.keys.base import (
    INDEX_ENTRY,
    KeyStore,
    KeyStoreError,
    entry_name,
    fingerprint,
    mask_key,
)
from byok_tui.keys.command import program_of
from byok_tui.keys.index import KeyIndex, parse_index
from byok_tui.keys.resolve import (
    KeySpec,
    NoApiKeyError,
    ResolvedKey,
    UnusableKeyError,
    remember_environment_keys,
    resolve_key,
)


class KeySnapshot(KeyStore):
    """The store's entries as read once: what follows from them (each provider's state, which
    provider is usable, which key answers) is worked out without reading the store again.
    Each read can be slow: a keyring asks a daemon, which may ask the user."""

    def __init__(self, entries: Mapping[str, str], error: KeyStoreError | None = None) -> None:
        super().__init__()
        self._entries = entries
        self._error = error  # the read failed: every read from the snapshot says so

    @property
    def location(self) -> str:
        return "snapshot"

    def _read(self, entry: str) -> str | None:
        if self._error is not None:
            raise self._error
        return self._entries.get(entry)

    def _write(self, entry: str, value: str) -> None:
        raise NotImplementedError("a snapshot is read-only")

    def _remove(self, entry: str) -> bool:
        raise NotImplementedError("a snapshot is read-only")


def read_keys(
    specs: Sequence[KeySpec], store: KeyStore, environ: Mapping[str, str]
) -> tuple[KeyOverview, KeySnapshot]:
    """Every provider's key state, and the keys they were worked out from."""
    remember_environment_keys(tuple(specs), environ)
    error: KeyStoreError | None = None
    index = KeyIndex()
    try:
        index_text = store.get_text(INDEX_ENTRY)
        index = parse_index(index_text) if index_text else index
        wanted = [entry_name(s.id) for s in specs if s.needs_key]
        wanted += [entry_name(p, label) for p, labels in index.labels.items() for label in labels]
        entries = store.get_many(wanted)
        if index_text:
            entries[INDEX_ENTRY] = index_text
    except KeyStoreError as failure:
        error, entries, index = failure, {}, KeyIndex()
    snapshot = KeySnapshot(entries)
    statuses = []
    for spec in specs:
        entry = entry_name(spec.id) if spec.needs_key else None
        resolved: ResolvedKey | None
        unusable = None
        try:
            resolved = resolve_key(spec, snapshot, environ=environ)
        except NoApiKeyError:
            resolved = None
        except UnusableKeyError as refused:
            resolved, unusable = None, refused.message
        statuses.append(
            KeyStatus(
                provider_id=spec.id,
                display_name=spec.display_name,
                entry=entry,
                stored=entry in entries,
                source=resolved.source if resolved else None,
                origin=resolved.origin if resolved else "",
                masked=mask_key(resolved.value)
                if resolved and resolved.value and resolved.source is not KeySource.LOCAL_RUNTIME
                else "",
                unusable=unusable,
                program=program_of(resolved.command) if resolved and resolved.command else "",
                fingerprint=fingerprint(resolved.value)
                if resolved and resolved.value and resolved.source is not KeySource.LOCAL_RUNTIME
                else None,
            )
        )
    labelled = [
        LabelledKey(
            provider_id=provider_id,
            label=label,
            entry=entry_name(provider_id, label),
            masked=mask_key(value) if value else "",
            program=program_of(command) if command else "",
            command=command or "",
            fingerprint=fingerprint(value) if value else None,
        )
        for provider_id, labels in index.labels.items()
        for label in labels
        for command in [index.command(provider_id, label)]
        for value in ["" if command else entries.get(entry_name(provider_id, label), "")]
    ]
    overview = KeyOverview(
        tuple(statuses),
        store.location,
        error,
        tuple(store.notices),
        labelled=tuple(labelled),
        failover=tuple(index.failover),
        commands=tuple((p, cs[""]) for p, cs in index.commands.items() if "" in cs),
    )
    return overview, KeySnapshot(entries, error)


def key_overview(
    specs: Sequence[KeySpec], store: KeyStore, environ: Mapping[str, str]
) -> KeyOverview:
    return read_keys(specs, store, environ)[0]
