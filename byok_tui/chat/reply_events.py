"""What a send yields besides the stream itself, and how a reply's end is told: shared by the
conversation service, the app's relay and `ask`."""

from __future__ import annotations

from dataclasses import dataclass

from byok_tui.chat.history import HistoryTrimmed
from byok_tui.chat.key_failover import KeyFailedOver
from byok_tui.chat.outgoing import ToolNotice, ToolRan, ToolRoundsSpent
from byok_tui.chat.reply_recorder import ReplyPriced
from byok_tui.chat.send_keys import NoModelError
from byok_tui.core.errors import ByokError, ErrorKind
from byok_tui.core.records import Message, MessageStatus
from byok_tui.keys import NoApiKeyError, ResolvedKey, UnusableKeyError
from byok_tui.keys.command import KeyCommandError
from byok_tui.keys.resolve import NoSuchLabelError
from byok_tui.providers.errors import SettingOutOfRangeError
from byok_tui.providers.types import Done, StreamEvent
from byok_tui.spend.budgets import BudgetReachedError, FreeQuotaReachedError


@dataclass(frozen=True, slots=True)
class ReplyStarted:
    """The reply's row exists; `key` says which key is used (its source, for display)."""

    message: Message
    key: ResolvedKey


# What refuses a send before any request: the message is kept, the reply says why.
PRE_SEND_ERRORS = (
    SettingOutOfRangeError,
    NoModelError,
    BudgetReachedError,
    FreeQuotaReachedError,
    NoApiKeyError,
    NoSuchLabelError,
    KeyCommandError,
    UnusableKeyError,
)


class LengthLimitReached(ByokError):
    """The reply stopped at the length limit (max tokens): kept, partial, and continuable.
    Stored beside the reply, and `ask`'s exit status."""

    kind = ErrorKind.TRUNCATED

    def __init__(self, max_tokens: int) -> None:
        super().__init__(
            f"The reply reached the length limit ({max_tokens:,} tokens)",
            remedy="Continue it where it stopped (c on the reply, or ask --continue), or "
            "raise the bot's max tokens.",
        )


ReplyEvent = (
    ReplyStarted
    | StreamEvent
    | ReplyPriced
    | KeyFailedOver
    | HistoryTrimmed
    | ToolRan
    | ToolRoundsSpent
    | ToolNotice
)


def how_it_ended(
    ended: Done | None, max_tokens: int
) -> tuple[MessageStatus, str | None, str | None]:
    """A reply's status, error kind and what is said of it, once its stream is over."""
    if ended is None:
        return "partial", None, None
    if ended.at_length_limit:
        return "partial", ErrorKind.TRUNCATED.value, LengthLimitReached(max_tokens).one_line()
    return "complete", None, None
