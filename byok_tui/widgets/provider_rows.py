"""A provider's row in the sidebar: symbol, name and key state.

Apart from the sidebar, so that the first frame (screens/start.py) can draw the same rows
without loading the sidebar's widgets.
"""

from __future__ import annotations

from rich.text import Text

from byok_tui.core.key_records import TAKES_NO_KEY, KeySource, KeyStatus


def key_state(status: KeyStatus, local_running: bool | None) -> tuple[str, str]:
    """(symbol, words) for a provider's key state in the sidebar."""
    if status.unusable is not None:
        return "✗", "invalid key"
    if status.source is KeySource.LOCAL_RUNTIME:
        if local_running is None:
            return "?", "no key needed"
        return ("●", "running") if local_running else ("○", "not running")
    if status.source is KeySource.NONE:
        return (
            ("●", "no key needed") if status.origin == TAKES_NO_KEY else ("○", "no key (optional)")
        )
    if status.source is KeySource.GLOBAL:
        return "●", "key set"
    if status.source is KeySource.ENVIRONMENT:
        return "◐", f"from {status.origin}"
    return "○", "no key"


def provider_label(
    status: KeyStatus, current: str, local_running: bool | None, limits: str = ""
) -> Text:
    """A provider's row in the sidebar: symbol, name and key state, and what its rate limits
    say when it matters."""
    symbol, words = key_state(status, local_running)
    weight = "bold" if status.provider_id == current else ""
    return Text.assemble(
        (f"{symbol} ", weight),
        (status.display_name, weight),
        (f"  {words}", "dim"),
        (f" · {limits}" if limits else "", "yellow"),
    )


def pending_label(display_name: str) -> Text:
    """A provider's row while its key state is being read (from a keyring that is slow to
    load): the name at once, the state a moment later."""
    return Text.assemble("… ", display_name, ("  reading keys", "dim"))
