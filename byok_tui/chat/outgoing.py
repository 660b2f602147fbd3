"""What is being sent: one value from the composer or the shell, through the app's data
service, to the conversation service that stores it and asks for the reply."""

from __future__ import annotations

from dataclasses import dataclass

from byok_tui.core.attachments import Attachment
from byok_tui.core.records import BotConfig


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A message to send, and how its reply is asked for."""

    text: str | None
    """The message; None: the last user message is asked again (a retry, a regeneration)."""
    attachments: tuple[Attachment, ...] = ()
    """Files sent with `text`, kept with it (and sent again with the history)."""
    config: BotConfig | None = None
    """The bot's configuration for this message only (a fallback's); None: the bot's own."""
    fallback: bool = False
    """`config` is one of the bot's fallbacks: the reply is marked as answered by it."""
    edit_of: int | None = None
    """The stored user message `text` is an alternative to (a new branch)."""
    regenerate: int | None = None
    """The stored reply to answer again, with `text` None (a new branch)."""
    over_budget: bool = False
    """The user chose to go over a budget already used up, this once."""
    key_label: str | None = None
    """A labelled key of the provider to send with (`ask --key`), over the bot's choice."""
