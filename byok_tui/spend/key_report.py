"""Every key of every provider as one row: which it is, where it comes from, its key masked,
its health, when it was last used and set. What `keys list` prints and Settings shows.

Pure: it puts together what was read (the key overview, the key health table, the times keys
were set); never the key itself, only `mask_key`'s form of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from byok_tui.core.records import KeyHealth, KeyOverview, KeySource
from byok_tui.core.redaction import redact
from byok_tui.providers.limits import age_in_words

DEFAULT = "default"
DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class KeyRow:
    provider_id: str
    label: str  # default, or the key's label
    entry: str  # the store entry, or "-" (local runtime)
    stored: str  # set, unset, command, local
    used_for_calls: str  # what a call uses now (for the default row), or "when chosen"
    key: str  # masked, `command: pass show …`, or "-"
    health: str  # ok, invalid (401), no credit, cooling for 30 s, not checked, -
    last_used: str
    set_at: str  # `12 days ago`, with a reminder when it is older than the user wants

    def cells(self) -> tuple[str, ...]:
        return (
            self.provider_id,
            self.label,
            self.entry,
            self.stored,
            self.used_for_calls,
            self.key,
            self.health,
            self.last_used,
            self.set_at,
        )


HEADINGS = (
    *("PROVIDER", "KEY", "ENTRY", "STORED", "USED FOR CALLS"),
    *("VALUE", "HEALTH", "USED", "SET"),
)


def health_of(
    found: Sequence[KeyHealth], name: str, fingerprint: str | None, set_at: float | None = None
) -> KeyHealth | None:
    """A stored key's health by its fingerprint (a changed key starts afresh); a command's
    by its name, the most recent, and only from answers after it was set (`set_at`): a key
    replaced by a command starts afresh too, though the command's key is not known until it
    runs."""
    if fingerprint is not None:
        return next((h for h in found if h.fingerprint == fingerprint), None)
    return next(
        (h for h in found if h.name == name and (set_at is None or h.last_used >= set_at)),
        None,
    )


def key_rows(
    overview: KeyOverview,
    health: Mapping[str, Sequence[KeyHealth]],
    set_times: Mapping[tuple[str, str], float],
    now: float,
    remind_after_days: float = 0.0,
) -> list[KeyRow]:
    """One row per provider's default key, then one per labelled key, provider by provider."""
    commands = dict(overview.commands)
    rows = []

    def when(provider_id: str, name: str, found: KeyHealth | None) -> tuple[str, str, str]:
        state = found.describe(now) if found else "not used yet"
        used = age_in_words(now - found.last_used) if found else "-"
        set_at = set_times.get((provider_id, name))
        set_words = age_in_words(now - set_at) if set_at else "-"
        if set_at and remind_after_days and now - set_at > remind_after_days * DAY:
            set_words += " (time to rotate it?)"
        return state, used, set_words

    for status in overview.statuses:
        found_health = health.get(status.provider_id, ())
        if status.entry is None:
            stored = "local" if status.source is KeySource.LOCAL_RUNTIME else "none"
            rows.append(
                KeyRow(status.provider_id, "-", "-", stored, status.describe(), "-", "-", "-", "-")
            )
        else:
            name = status.origin if status.source is KeySource.ENVIRONMENT else DEFAULT
            found = health_of(
                found_health, name, status.fingerprint, set_times.get((status.provider_id, name))
            )
            command = commands.get(status.provider_id)
            stored = "set" if status.stored else ("command" if command else "unset")
            shown_command = command if command and not status.stored else ""
            value = f"command: {redact(shown_command)}" if shown_command else status.masked
            state, used, set_words = when(status.provider_id, DEFAULT, found)
            if status.source is None:
                state = "-"
            rows.append(
                KeyRow(
                    status.provider_id,
                    DEFAULT,
                    status.entry,
                    stored,
                    status.describe(),
                    value or "-",
                    state,
                    used,
                    set_words,
                )
            )
        for labelled in overview.labelled:
            if labelled.provider_id != status.provider_id:
                continue
            found = health_of(
                found_health,
                labelled.label,
                labelled.fingerprint,
                set_times.get((status.provider_id, labelled.label)),
            )
            state, used, set_words = when(status.provider_id, labelled.label, found)
            rows.append(
                KeyRow(
                    status.provider_id,
                    labelled.label,
                    labelled.entry,
                    "command" if labelled.command else ("set" if labelled.masked else "unset"),
                    "when chosen",
                    f"command: {redact(labelled.command)}"
                    if labelled.command
                    else labelled.masked or "-",
                    state,
                    used,
                    set_words,
                )
            )
    return rows
