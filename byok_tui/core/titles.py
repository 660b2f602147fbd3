"""A conversation's title, made from its first message: on one line, never holding a key."""

from __future__ import annotations

from byok_tui.core.redaction import redact_keys

TITLE_LENGTH = 60


def title_for(first_message: str | None) -> str:
    """A new conversation's title: its first message on one line, any key in it replaced
    before it is shortened (a cut key would no longer be recognised, and leak in part)."""
    line = redact_keys(" ".join((first_message or "").split())) or "New chat"
    return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1] + "…"
