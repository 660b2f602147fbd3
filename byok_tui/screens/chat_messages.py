"""Messages the chat screen's and the conversation column's workers post: typed results of
service calls, and what a reply brings as it streams."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from byok_tui.chat_state import ChatState, KeyInUse
from byok_tui.errors import ByokError
from byok_tui.providers.types import StreamEvent
from byok_tui.redaction import StreamRedactor


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
    running: bool


@dataclass
class KeyInUseFound(Message):
    key: KeyInUse


@dataclass
class BotCreated(Message):
    bot_id: int


@dataclass
class BotDeleted(Message):
    bot_id: int
    name: str


class ReplyText:
    """Reply text the send worker has received and the screen has not shown yet.

    The worker appends; it posts `ReplyTextReady` only when the buffer was empty, so however
    fast tokens arrive there is at most one message per batch (one per token starved the
    event loop on a 5,000-token reply). What is taken has the user's keys replaced, even a
    key cut across two batches: a model that echoes a key never puts it on screen.
    """

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self._shown = (StreamRedactor(), StreamRedactor())  # text, reasoning

    @property
    def empty(self) -> bool:
        return not self.text and not self.reasoning

    def take(self, *, final: bool = False) -> tuple[str, str]:
        """What can be shown now; `final`: all of it, at the end of the reply."""
        shown_text, shown_reasoning = self._shown
        text = shown_text.feed("".join(self.text))
        reasoning = shown_reasoning.feed("".join(self.reasoning))
        self.text, self.reasoning = [], []
        if final:
            text, reasoning = text + shown_text.flush(), reasoning + shown_reasoning.flush()
        return text, reasoning


# What the send worker hands to the conversation column: handled there, not bubbled up.


class ReplyTextReady(Message, bubble=False):
    """Text arrived (ReplyText holds it): one message per batch, however fast it comes."""


@dataclass
class ReplyEvent(Message, bubble=False):
    event: StreamEvent


@dataclass
class ReplyOpened(Message, bubble=False):
    """The request is on the wire: the reply is shown, under this meta line."""

    meta: str


@dataclass
class ReplyFailed(Message, bubble=False):
    error: ByokError
    unsent: str | None = None  # the user's text, when even saving it failed


@dataclass
class ReplyEnded(Message, bubble=False):
    """The reply finished, failed or was stopped: ready for the next message."""

    stopped: bool = False
