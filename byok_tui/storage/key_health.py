"""What each key's answers said of it: ok, invalid (401), no credit (402 or
`insufficient_quota`), or cooling until a time (429 and its wait), with when it was last used.

Kept per provider under a fingerprint of the key (a hash; never the key, nor a piece of it),
so a key that is changed starts afresh: a key found invalid is skipped only until it changes.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

from byok_tui.core.records import LONGEST_WAIT, KeyHealth
from byok_tui.core.sanitize import clean_line

if TYPE_CHECKING:
    from byok_tui.providers.types import RequestRecord
    from byok_tui.storage.database import Database

# A 429 that states no wait: how long the key is left to cool before failover tries it again.
COOLING_WITHOUT_A_WAIT = 60.0
_SET_AT = "key-set:"  # settings entry: when a key was last set through byok-tui


def state_after(record: RequestRecord) -> tuple[str, float | None] | None:
    """(state, until) that the request's answer says of its key; None when it says nothing
    of the key (a network failure, a 400, a 5xx...)."""
    status = record.status
    if status is not None and 200 <= status < 300:
        return "ok", None
    if status == 401:
        return "invalid", None
    if status == 402 or (status == 429 and record.outcome == "billing"):
        return "no credit", None
    if status == 429:
        wait = record.retry_after if record.retry_after is not None else COOLING_WITHOUT_A_WAIT
        return "cooling", record.started + record.duration_s + wait
    return None


def _health(
    name: str,
    fingerprint: str,
    state: str,
    until: float | None,
    checked: float | None,
    last_used: float,
) -> KeyHealth:
    """A row as read: a wait stored before waits were bounded (an endless one) ends at most a
    day after it was said, rather than break every screen that shows it."""
    if until is not None and not math.isfinite(until):
        until = (checked or last_used) + LONGEST_WAIT if until > 0 else None
    return KeyHealth(name, fingerprint, state, until, checked, last_used)


class KeyHealthBook:
    def __init__(self, store: Database) -> None:
        self._store = store

    def note(self, record: RequestRecord) -> None:
        """What one request's answer said of the key it carried."""
        if record.key_fingerprint is None or record.key_name is None:
            return
        provider, name = clean_line(record.provider)[:64], clean_line(record.key_name)[:64]
        said = state_after(record)
        with self._store.transaction() as db:
            row = db.execute(
                "SELECT state, until, checked FROM key_health"
                " WHERE provider = ? AND fingerprint = ?",
                (provider, record.key_fingerprint),
            ).fetchone()
            state, until, checked = tuple(row) if row else ("unknown", None, None)
            if said is not None:
                (state, until), checked = said, record.started
            db.execute(
                "INSERT INTO key_health"
                " (provider, fingerprint, name, state, until, checked, last_used)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(provider, fingerprint) DO UPDATE SET"
                " name = excluded.name, state = excluded.state, until = excluded.until,"
                " checked = excluded.checked, last_used = excluded.last_used",
                (provider, record.key_fingerprint, name, state, until, checked, record.started),
            )

    def of_provider(self, provider: str) -> list[KeyHealth]:
        """The provider's keys as their answers left them, the most recently used first."""
        rows = self._store.connection().execute(
            "SELECT name, fingerprint, state, until, checked, last_used FROM key_health"
            " WHERE provider = ? ORDER BY last_used DESC",
            (provider,),
        )
        return [_health(*row) for row in rows]

    def all(self) -> dict[str, list[KeyHealth]]:
        rows = self._store.connection().execute(
            "SELECT provider, name, fingerprint, state, until, checked, last_used"
            " FROM key_health ORDER BY last_used DESC"
        )
        found: dict[str, list[KeyHealth]] = {}
        for provider, *rest in rows:
            found.setdefault(provider, []).append(_health(*rest))
        return found

    def mark_set(self, provider: str, name: str) -> None:
        """The key `name` of `provider` was set (or its command changed) just now."""
        # To the instant: rounded to a second, an answer just before the key was set could
        # count as the new key's (a key replaced by a command would show the old one's 401).
        self._store.set_setting(f"{_SET_AT}{provider}:{name}", repr(time.time()))

    def set_times(self) -> dict[tuple[str, str], float]:
        """(provider, key name) -> when that key was last set through byok-tui."""
        found = {}
        for setting, value in self._store.settings().items():
            if setting.startswith(_SET_AT):
                provider, _, name = setting[len(_SET_AT) :].partition(":")
                try:
                    found[provider, name] = float(value)
                except ValueError:
                    continue
        return found
