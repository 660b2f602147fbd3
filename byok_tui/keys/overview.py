"""The state of every provider's key at a glance: what `keys list` and the app show.

Reads the store once for all providers, so that every key's state is known at start-up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from byok_tui.keys.base import KeyStore, KeyStoreError, entry_name, mask_key
from byok_tui.keys.resolve import (
    KeySpec,
    NoApiKeyError,
    ResolvedKey,
    UnusableKeyError,
    remember_environment_keys,
    resolve_key,
)
from byok_tui.records import KeyOverview, KeySource, KeyStatus


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
    try:
        entries = store.get_many(entry_name(s.id) for s in specs if s.needs_key)
    except KeyStoreError as failure:
        error, entries = failure, {}
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
                if resolved and resolved.source is not KeySource.LOCAL_RUNTIME
                else "",
                unusable=unusable,
            )
        )
    overview = KeyOverview(tuple(statuses), store.location, error, tuple(store.notices))
    return overview, KeySnapshot(entries, error)


def key_overview(
    specs: Sequence[KeySpec], store: KeyStore, environ: Mapping[str, str]
) -> KeyOverview:
    return read_keys(specs, store, environ)[0]
