"""The chat screen's send path, from Enter to the last word of the reply.

The send worker calls the conversation service and hands what arrives to the screen through
typed messages (screens/chat_messages.py); the handlers here touch the transcript. Nothing the
user typed is lost: a message typed while a reply is streaming goes back into the composer, and
one that could not be saved goes back where it was typed. `ChatScreen` (screens/chat.py) adds
the sidebar, the config pane and the conversation actions.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from rich.text import Text
from textual import work
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from byok_tui.app_data import AppData
from byok_tui.chat_state import ChatState
from byok_tui.conversation import ReplyStarted, title_for
from byok_tui.errors import ByokError, ErrorKind
from byok_tui.providers.errors import ProviderError
from byok_tui.providers.types import (
    Done,
    RateLimitWait,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
)
from byok_tui.redaction import secrets_in
from byok_tui.screens.chat_messages import (
    ConversationStarted,
    ReplyEnded,
    ReplyEvent,
    ReplyFailed,
    ReplyOpened,
    ReplyText,
    ReplyTextReady,
)
from byok_tui.screens.dialogs import ConfirmDialog
from byok_tui.widgets.composer import Composer
from byok_tui.widgets.sidebar import Sidebar
from byok_tui.widgets.transcript import ReplyView, Transcript, reply_meta

YIELD_SECONDS = 0.012  # longest the send worker runs before letting the UI have a turn
YIELD_TURNS = 10  # and how many turns: enough for a chain of messages to run, never idle
FIRST_WORDS_WAIT = 0.05  # longest the send worker waits for a reply's first words to be drawn
AUTO_RETRY_LIMIT = 90.0  # seconds: a longer wait is left to the user (ctrl+r)
ECHO_GRACE = 0.03  # longest a sent message waits for its request to be on the wire


class ChatSending(Screen[None]):
    """Sending a message and streaming its reply into the transcript."""

    def __init__(self, data: AppData) -> None:
        super().__init__()
        self.data = data
        self.state: ChatState | None = None
        self._reply: ReplyView | None = None
        self._unechoed: str | None = None  # sent text not drawn in the transcript yet
        self._send: Worker[None] | None = None
        self._activity_started = 0.0
        self._wait_until = 0.0
        self._retry_at = 0.0  # when a rate-limited message is sent again by itself
        self._retried_after_limit = False
        self._incoming = ReplyText()
        self._first_words_drawn: asyncio.Event | None = None  # set once they are on screen
        # Set while the state on screen is what the user asked for; cleared while a
        # conversation (or the bot's config) is being read: a message sent then waits.
        self._ready = asyncio.Event()
        self._unsent_saved = False  # a message waiting for its conversation is kept aside

    def _after_reply(self) -> None:
        """Called once a reply has ended, however it ended."""

    def on_composer_submitted(self, message: Composer.Submitted) -> None:
        self._retry_at = 0.0
        self._retried_after_limit = False
        if self._busy:
            composer = self.query_one(Composer)
            composer.text = message.text  # give it back: never lose what was typed
            self.notify("A reply is on its way: wait, or press Escape to stop it.")
            return
        found = secrets_in(message.text)
        if not found:
            self._send_new(message.text)
            return
        text = message.text

        def decided(send_anyway: bool | None) -> None:
            if send_anyway:
                self._send_new(text)
            else:
                self.query_one(Composer).text = text  # held, not lost

        question = (
            f"Your message contains {' and '.join(found)}. It would be sent to the model's "
            "provider and kept in its logs."
        )
        if "one of your API keys" in found:
            question += (
                " byok-tui stores it with your key replaced by [REDACTED], and later "
                "messages in this conversation send it that way."
            )
        question += " Send it anyway?"
        self.app.push_screen(ConfirmDialog(question, yes="Send anyway"), decided)

    def _send_new(self, text: str) -> None:
        # The message is drawn once its request is on the wire, or after ECHO_GRACE if that
        # takes longer: a frame drawn first would hold the request back by its length.
        self._unechoed = text
        self.set_timer(ECHO_GRACE, self._echo)
        if not self._ready.is_set():
            # Its conversation is still being read: keep the message now, store it there
            # once it is open, so that nothing is lost if the process dies meanwhile.
            self._unsent_saved = True
            self.data.keep_unsent(text)
        self._start_send(text)

    def _forget_unsent(self) -> None:
        """The message kept aside is stored in its conversation (or back in the composer)."""
        self._unsent_saved = False
        self.data.keep_unsent("")

    def _echo(self) -> None:
        # Not while a conversation is being opened: showing it would wipe the message.
        if self._unechoed is not None and self._ready.is_set():
            text, self._unechoed = self._unechoed, None
            self.query_one(Transcript).add_user(text)

    @property
    def _busy(self) -> bool:
        return self._send is not None and self._send.state in (
            WorkerState.PENDING,
            WorkerState.RUNNING,
        )

    def _start_send(self, text: str | None) -> None:
        self._activity_started = time.monotonic()
        self._send = self._send_worker(text)
        self._tick_activity()  # at once, not at the next half-second tick

    @work(exclusive=True, group="send")
    async def _send_worker(self, text: str | None) -> None:
        data = self.data
        if not self._ready.is_set():
            await self._ready.wait()  # the conversation the message belongs to is opening
        if self.state is None:  # it could not be opened (the error was shown)
            self.post_message(
                ReplyFailed(
                    ByokError(
                        "The message was not sent: no conversation could be opened",
                        remedy="It is back in the composer; send it again once the error "
                        "above is mended.",
                    ),
                    unsent=text,
                )
            )
            self.post_message(ReplyEnded())
            return
        try:
            # Read after the writes before it: a key typed just now is the key sent.
            bot = await asyncio.to_thread(data.bot, self.state.bot.id)
            conversation = self.state.conversation
            if conversation is None:
                title = title_for(text)
                conversation = await asyncio.to_thread(data.create_conversation, bot.id, title)
                self.post_message(ConversationStarted(conversation))
        except ByokError as error:  # nothing was stored: the message goes back to the composer
            self.post_message(ReplyFailed(error, unsent=text))
            self.post_message(ReplyEnded())
            return
        stopped = False
        slice_started = time.perf_counter()
        first_words = True
        unopened: list[str] = []  # the reply's meta line, until the reply is shown

        def open_reply() -> None:  # once the request is on the wire
            self._echo()
            if unopened:
                self.post_message(ReplyOpened(unopened.pop()))

        try:
            async for event in data.send(bot, conversation, text, on_sent=open_reply):
                if self._unsent_saved:
                    self._forget_unsent()  # stored in its conversation now
                if time.perf_counter() - slice_started > YIELD_SECONDS:
                    # A fast server delivers thousands of events in a few reads; parsing them
                    # all at once would freeze the keyboard, so give the loop a turn.
                    for _turn in range(YIELD_TURNS):
                        await asyncio.sleep(0)
                    slice_started = time.perf_counter()
                if isinstance(event, ReplyStarted):
                    source = event.key.source.value
                    unopened.append(reply_meta(bot.config.provider, bot.config.model, source))
                else:
                    open_reply()  # no-op unless the request was never reported as sent
                    self._forward(event)
                    if first_words and isinstance(event, TextDelta | ReasoningDelta):
                        # The first words go on screen before anything else is parsed.
                        first_words = False
                        drawn = self._first_words_drawn = asyncio.Event()
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(drawn.wait(), FIRST_WORDS_WAIT)
                        slice_started = time.perf_counter()
        except ByokError as error:
            if error.kind is ErrorKind.STORAGE:  # the message may not be stored: give it back
                self.post_message(ReplyFailed(error, unsent=text))
            else:
                if self._unsent_saved:
                    self._forget_unsent()  # stored before the error (e.g. no API key)
                self.post_message(ReplyFailed(error))
        except asyncio.CancelledError:
            stopped = True
            raise
        finally:
            self.post_message(ReplyEnded(stopped))

    def _forward(self, event: StreamEvent) -> None:
        if isinstance(event, TextDelta | ReasoningDelta):
            was_empty = self._incoming.empty
            (
                self._incoming.text if isinstance(event, TextDelta) else self._incoming.reasoning
            ).append(event.text)
            if was_empty:
                self.post_message(ReplyTextReady())
            return
        if not self._incoming.empty:
            self.post_message(ReplyTextReady())  # text first, then what follows it
        self.post_message(ReplyEvent(event))

    def on_reply_text_ready(self, _message: ReplyTextReady) -> None:
        self._show_incoming()

    def _show_incoming(self, *, final: bool = False) -> None:
        """Give the reply what arrived; `final`: all of it (the reply has ended)."""
        text, reasoning = self._incoming.take(final=final)
        if self._reply is None:
            return
        self._wait_until = 0.0
        if reasoning:
            self._reply.append_reasoning(reasoning)
        if text:
            self._reply.append_text(text)
        if self._first_words_drawn is not None:
            self._when_drawn(self._reply, self._first_words_drawn)
            self._first_words_drawn = None

    def _when_drawn(self, reply: ReplyView, drawn: asyncio.Event) -> None:
        """Set `drawn` once the next layout has drawn what `reply` was just given."""
        signal = self.screen_layout_refresh_signal
        if not reply.is_running:  # not started yet: nothing to wait for
            drawn.set()
            return

        def laid_out(_screen: Screen[None]) -> None:
            signal.unsubscribe(reply)
            drawn.set()

        signal.subscribe(reply, laid_out, immediate=True)

    def on_conversation_started(self, message: ConversationStarted) -> None:
        if self.state is not None:
            self.state.conversation = message.conversation
            self.state.conversations.insert(0, message.conversation)
            self.query_one(Sidebar).show_conversations(
                self.state.conversations, message.conversation.id
            )

    def on_reply_opened(self, message: ReplyOpened) -> None:
        self._echo()
        self._reply = self.query_one(Transcript).start_reply(message.meta)

    async def on_reply_event(self, message: ReplyEvent) -> None:
        event, reply = message.event, self._reply
        if isinstance(event, RateLimitWait):
            self._wait_until = time.monotonic() + event.seconds
            return
        self._wait_until = 0.0
        if reply is not None and isinstance(event, Done):
            self._show_incoming(final=True)
            reply.finish()

    async def on_reply_failed(self, message: ReplyFailed) -> None:
        self._echo()  # the message first, then what became of it
        error = message.error
        composer = self.query_one(Composer)
        if message.unsent and not composer.text:
            composer.text = message.unsent  # it could not be saved: keep it where it was typed
        if self._reply is not None and not (self._reply.content or self._reply.reasoning):
            await self._reply.remove()  # nothing arrived: the error block says it all
            self._reply = None
        said = error.provider_message if isinstance(error, ProviderError) else None
        self.query_one(Transcript).add_error(
            error.message, f"{error.remedy} Press ctrl+r to retry.", said
        )
        if (
            isinstance(error, ProviderError)
            and error.kind is ErrorKind.RATE_LIMIT
            and not error.daily_limit
            and error.retry_after is not None
            and error.retry_after <= AUTO_RETRY_LIMIT
            and not self._retried_after_limit
        ):
            # Wait out the provider's own figure, with a countdown, then try once more.
            self._retried_after_limit = True
            self._retry_at = time.monotonic() + error.retry_after

    async def on_reply_ended(self, message: ReplyEnded) -> None:
        self._echo()
        self._show_incoming(final=True)  # what arrived before the end is shown
        reply, self._reply = self._reply, None
        if reply is not None:
            reply.finish()
            if message.stopped:
                reply.set_meta(reply._meta + " · stopped, partial reply kept", partial=True)
        self._wait_until = 0.0
        self._activity_started = 0.0
        self._tick_activity()
        self._after_reply()

    def _auto_retry_due(self, now: float) -> bool:
        if self._retry_at and now >= self._retry_at and not self._busy:
            self._retry_at = 0.0
            self._start_send(None)
            return True
        return False

    def _tick_activity(self) -> None:
        activity = self.query_one("#activity", Static)
        now = time.monotonic()
        if self._auto_retry_due(now):
            return
        if self._retry_at > now:
            seconds = int(self._retry_at - now) + 1
            line = f"⏳ Rate limited · retry in {seconds} s · Esc cancels"
            activity.update(Text(line), layout=False)
            activity.set_class(True, "busy")
            return
        if self._wait_until > now:
            seconds = int(self._wait_until - now) + 1
            line = f"⏳ Rate limit: sending in {seconds} s · Esc stops"
            activity.update(Text(line), layout=False)
        elif self._busy:
            dots = "." * (1 + int((now - self._activity_started) * 2) % 3)
            doing = "Reply on its way" if self._ready.is_set() else "Opening the conversation"
            activity.update(Text(f"● {doing}{dots:<3} (Esc stops)"), layout=False)
        else:
            activity.update("", layout=False)
        activity.set_class(bool(self._busy), "busy")

    # Actions -----------------------------------------------------------------------------------

    def action_stop_reply(self) -> None:
        self._retry_at = 0.0
        if self._busy and self._send is not None:
            self._send.cancel()

    def action_retry(self) -> None:
        if self._busy or self.state is None or self.state.conversation is None:
            return
        self._start_send(None)
