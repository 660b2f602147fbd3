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


class _Snapshot(KeyStore):
    """The store's entries as read once, so each provider does not read the file again."""

    def __init__(self, entries: Mapping[str, str]) -> None:
        super().__init__()
        self._entries = entries

    @property
    def location(self) -> str:
        return "snapshot"

    def _read(self, entry: str) -> str | None:
        return self._entries.get(entry)

    def _write(self, entry: str, value: str) -> None:
        raise NotImplementedError("a snapshot is read-only")

    def _remove(self, entry: str) -> bool:
        raise NotImplementedError("a snapshot is read-only")


def key_overview(
    specs: Sequence[KeySpec], store: KeyStore, environ: Mapping[str, str]
) -> KeyOverview:
    remember_environment_keys(tuple(specs), environ)
    error: KeyStoreError | None = None
    try:
        entries = store.get_many(entry_name(s.id) for s in specs if s.needs_key)
    except KeyStoreError as failure:
        error, entries = failure, {}
    snapshot = _Snapshot(entries)
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
    return KeyOverview(tuple(statuses), store.location, error, tuple(store.notices))
