"""Messages the chat screen's and the conversation column's workers post: typed results of
service calls, and what a reply brings as it streams."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from textual.message import Message

from byok_tui.app_services.chat_state import ChatState, KeyInUse
from byok_tui.core.attachments import Attachment
from byok_tui.core.errors import ByokError
from byok_tui.core.key_records import KeyOverview
from byok_tui.core.records import Conversation, Spend, TranscriptPage


@dataclass
class StateLoaded(Message):
    """A read of what the screen shows (ChatState) is done."""

    state: ChatState
    transcript: bool  # the conversation was opened: the transcript shows its messages
    generation: int  # which read this is: only the newest is shown


@dataclass
class StateLoadFailed(Message):
    error: ByokError
    generation: int


@dataclass
class LocalRuntimeChecked(Message):
    provider_id: str
    running: bool


@dataclass
class KeyInUseFound(Message):
    key: KeyInUse
    overview: KeyOverview | None = None  # every provider's key state, read with it


@dataclass
class SpendRead(Message):
    """What was spent, and what the providers' rate limits say, after a reply."""

    spend: Spend
    limits: dict[str, str]


@dataclass
class BotCreated(Message):
    bot_id: int


@dataclass
class BotDeleted(Message):
    bot_id: int
    name: str


# What the send worker hands to the conversation column: handled there, not bubbled up.


@dataclass
class ReplyBilled(Message, bubble=False):
    """What the reply was billed for, in words (`1,204 in · 388 out · $0.0031`)."""

    usage: str
    cost_usd: float | None  # what this request added (a continued reply's first part was billed)


@dataclass
class ReplyDone(Message, bubble=False):
    """The provider said the reply has ended (it is being saved)."""

    at_length_limit: bool = False  # it stopped at the length limit: it can be continued


@dataclass
class ReplyOpened(Message, bubble=False):
    """The request is on the wire: the reply is shown, under this meta line."""

    meta: str
    reply_id: int | None = None  # the reply as stored
    question_id: int | None = None  # the message it answers, as stored
    continued: str | None = None  # a reply continued: its text so far, shown already


@dataclass
class ReplyFailed(Message, bubble=False):
    error: ByokError
    unsent: str | None = None  # the user's text, when even saving it failed
    files: list[Attachment] = field(default_factory=list)  # and its files, then
    continue_of: int | None = None  # a continuation of this reply failed: it keeps its text
    # Set when a fallback may be asked instead: the failure in a few words (`openai:
    # rate-limited`) and the bot's next fallback.
    fallback_what: str = ""
    fallback_to: str | None = None


@dataclass
class ReplyEnded(Message, bubble=False):
    """The reply finished, failed or was stopped: ready for the next message."""

    stopped: bool = False


@dataclass
class KeyNotice(Message, bubble=False):
    """Failover sent the message with another key, or passed one over, or the key a command
    printed looks like another provider's: what happened."""

    text: str
    title: str = "Key failover"


@dataclass
class EarlierRead(Message, bubble=False):
    """Earlier messages of the open conversation were read (`page` None: they could not be,
    `error` says why): those before the message `before`, with one to reveal."""

    page: TranscriptPage | None
    before: int
    reveal: int | None
    error: ByokError | None = None


@dataclass
class OlderConversationsRead(Message):
    """The bot's next page of older conversations was read (`error`: it could not be)."""

    bot_id: int
    conversations: list[Conversation]
    error: ByokError | None = None


@dataclass
class NewestRead(Message, bubble=False):
    """The newest page of the open conversation was read (`page` None: it could not be)."""

    page: TranscriptPage | None
    error: ByokError | None = None


@dataclass
class HistoryNotice(Message, bubble=False):
    """A line about the exchange: older messages left out of the request (they do not fit
    the model's context), tools not offered, a tool loop stopped."""

    text: str


@dataclass
class ToolShown(Message, bubble=False):
    """A tool call of the reply ran, or was refused: shown above the reply."""

    name: str
    """The tool as the model named it."""
    arguments: str
    """As the model wrote them: control characters removed, keys redacted."""
    result: str
    """What went back to the model (outside text, sanitised and redacted)."""
    error: bool
    """Not run (not allowed, or the model got it wrong), or failed."""


@dataclass
class AttachmentRead(Message, bubble=False):
    """A file to attach was read and checked."""

    attachment: Attachment
    path: Path  # as it was asked for


@dataclass
class AttachmentRefused(Message, bubble=False):
    """A file could not be attached; `pasted`: the text it came from, typed after all."""

    error: ByokError
    path: Path  # as it was asked for
    pasted: str | None = None
