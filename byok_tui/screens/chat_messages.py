"""Messages the chat screen's workers post: typed results of service calls."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.message import Message

from byok_tui.errors import ByokError
from byok_tui.keys.overview import KeyOverview
from byok_tui.providers.types import StreamEvent
from byok_tui.redaction import StreamRedactor
from byok_tui.storage.store import Bot, Conversation
from byok_tui.storage.store import Message as StoredMessage


@dataclass(frozen=True, slots=True)
class KeyInUse:
    """Which key the next message uses, in words (never the key), and whether there is one."""

    line: str
    found: bool


@dataclass
class ChatState:
    """Everything the screen shows, read in one go by a worker."""

    overview: KeyOverview
    bots: list[Bot]
    bot: Bot
    conversations: list[Conversation]
    conversation: Conversation | None
    messages: list[StoredMessage]
    models: list[tuple[Text, str]]
    global_key: str
    bot_key: str
    key_in_use: KeyInUse
    unsent: str  # a message sent while a conversation was opening, left by a process killed
    moved_to: str | None  # the provider the Default bot just moved to, following a new key


class StateLoaded(Message):
    def __init__(self, state: ChatState, *, transcript: bool, generation: int) -> None:
        super().__init__()
        self.state = state
        self.transcript = transcript
        self.generation = generation  # which read this is: only the newest is shown


class StateLoadFailed(Message):
    def __init__(self, error: ByokError, *, generation: int) -> None:
        super().__init__()
        self.error = error
        self.generation = generation


class LocalRuntimeChecked(Message):
    def __init__(self, running: bool) -> None:
        super().__init__()
        self.running = running


class KeyInUseFound(Message):
    def __init__(self, key: KeyInUse) -> None:
        super().__init__()
        self.key = key


class BotCreated(Message):
    def __init__(self, bot_id: int) -> None:
        super().__init__()
        self.bot_id = bot_id


class BotDeleted(Message):
    def __init__(self, bot_id: int, name: str) -> None:
        super().__init__()
        self.bot_id = bot_id
        self.name = name


class ConversationStarted(Message):
    def __init__(self, conversation: Conversation) -> None:
        super().__init__()
        self.conversation = conversation


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


class ReplyTextReady(Message):
    pass


class ReplyEvent(Message):
    def __init__(self, event: StreamEvent) -> None:
        super().__init__()
        self.event = event


class ReplyOpened(Message):
    def __init__(self, meta: str) -> None:
        super().__init__()
        self.meta = meta


class ReplyFailed(Message):
    def __init__(self, error: ByokError, unsent: str | None = None) -> None:
        super().__init__()
        self.error = error
        self.unsent = unsent  # the user's text, when even saving it failed


class ReplyEnded(Message):
    """The reply finished, failed or was stopped: the screen is ready for the next message."""

    def __init__(self, stopped: bool = False) -> None:
        super().__init__()
        self.stopped = stopped
