"""What is being sent: one value from the composer or the shell, through the app's data
service, to the conversation service that stores it and asks for the reply."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from byok_tui.core.attachments import Attachment
from byok_tui.core.records import BotConfig
from byok_tui.providers.types import ToolCall, ToolResult, ToolSpec

MOST_TOOL_ROUNDS = 10  # requests a message may make for its tools, the first one included
# What the model is told of a call the user did not allow (and how the transcript knows it).
DENIED = "The user did not allow this tool call. Answer without it, or say what you need."


@dataclass(frozen=True, slots=True)
class ToolBox:
    """The tools offered with a message, and what runs a call the model asks for (and asks
    the user first, or refuses: the runner decides, never the model)."""

    specs: tuple[ToolSpec, ...]
    run: Callable[[ToolCall], Awaitable[ToolResult]]
    most_rounds: int = MOST_TOOL_ROUNDS
    notices: tuple[str, ...] = ()
    """What kept tools from being offered (a server that could not be started): said once
    with the reply, which goes on without them."""


ListTools = Callable[[], Awaitable[ToolBox | None]]
"""Tools listed once the message is stored: listing starts or contacts the servers, which
may take seconds, and what the user said must be kept first."""


@dataclass(frozen=True, slots=True)
class ToolNotice:
    """Said with the reply: why some tools were not offered."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolRan:
    """A call the model asked for, and what went back to it."""

    call: ToolCall
    result: ToolResult


@dataclass(frozen=True, slots=True)
class ToolRoundsSpent:
    """The reply asked for tools again after its last allowed round: it ends here."""

    rounds: int


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
    answer_to: int | None = None
    """The stored user message to answer once more, with `text` None: a reply beside those
    it has (a compare's targets after the first)."""
    over_budget: bool = False
    """The user chose to go over a budget already used up, this once."""
    key_label: str | None = None
    """A labelled key of the provider to send with (`ask --key`), over the bot's choice."""
    toolbox: ToolBox | ListTools | None = None
    """Tools offered to the model, and who runs its calls (or what lists them once the
    message is stored); None: none is offered."""
