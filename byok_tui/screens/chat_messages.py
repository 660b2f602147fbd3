"""Messages the chat screen's workers post: typed results of service calls."""

from __future__ import annotations

from textual.message import Message

from byok_tui.chat_state import ChatState, KeyInUse
from byok_tui.errors import ByokError
from byok_tui.providers.types import StreamEvent
from byok_tui.records import Conversation
from byok_tui.redaction import StreamRedactor


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
