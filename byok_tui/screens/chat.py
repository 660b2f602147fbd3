"""The chat screen: provider sidebar, transcript and composer, per-bot config pane.

Workers call the services and post typed messages (screens/chat_messages.py); handlers here
touch widgets. Nothing the user typed is lost: a message is saved before it is sent, and a
message typed while a reply is streaming goes back into the composer.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import time

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.containers import Horizontal, Vertical
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import Button, Footer, Header, Static
from textual.worker import Worker, WorkerState

from byok_tui.bindings import CHAT_KEYS, textual_bindings
from byok_tui.conversation import ReplyStarted
from byok_tui.errors import ByokError, ErrorKind
from byok_tui.keys import entry_name
from byok_tui.keys.overview import KeyOverview
from byok_tui.providers.errors import ProviderError
from byok_tui.providers.registry import get_provider
from byok_tui.providers.types import (
    Done,
    RateLimitWait,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
)
from byok_tui.redaction import redact_known_secrets, secrets_in
from byok_tui.screens.chat_messages import (
    ChatState,
    ConversationStarted,
    LocalRuntimeChecked,
    ReplyEnded,
    ReplyEvent,
    ReplyFailed,
    ReplyOpened,
    ReplyText,
    ReplyTextReady,
    StateLoaded,
)
from byok_tui.screens.chat_state import key_in_use, read_state
from byok_tui.screens.dialogs import ConfirmDialog, TextDialog
from byok_tui.screens.start import NARROW, TINY
from byok_tui.services import AppContext
from byok_tui.storage.store import BotConfig, StorageError
from byok_tui.widgets.composer import Composer
from byok_tui.widgets.config_pane import ConfigPane
from byok_tui.widgets.sidebar import Sidebar
from byok_tui.widgets.transcript import ReplyView, Transcript, reply_meta

YIELD_SECONDS = 0.012  # longest the send worker runs before letting the UI have a turn
YIELD_TURNS = 10  # and how many turns: enough for a chain of messages to run, never idle
FIRST_WORDS_WAIT = 0.05  # longest the send worker waits for a reply's first words to be drawn
AUTO_RETRY_LIMIT = 90.0  # seconds: a longer wait is left to the user (ctrl+r)
ECHO_GRACE = 0.03  # longest a sent message waits for its request to be on the wire


class ChatScreen(Screen[None]):
    CSS_PATH = "chat.tcss"
    BINDINGS = textual_bindings(CHAT_KEYS)  # type: ignore[assignment]

    def __init__(
        self, context: AppContext, overview: KeyOverview | None = None, typed: str = ""
    ) -> None:
        super().__init__()
        self.context = context
        self._first_overview = overview
        self._typed_while_starting = typed
        self.state: ChatState | None = None
        self.local_running: bool | None = None
        self._reply: ReplyView | None = None
        self._unechoed: str | None = None  # sent text not drawn in the transcript yet
        self._send: Worker[None] | None = None
        self._activity_started = 0.0
        self._wait_until = 0.0
        self._shown_by_user: dict[str, bool] = {}
        self._mounted_pane: ConfigPane | None = None
        self._retry_at = 0.0  # when a rate-limited message is sent again by itself
        self._retried_after_limit = False
        self._incoming = ReplyText()
        self._first_words_drawn: asyncio.Event | None = None  # set once they are on screen

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="body"):
            yield Sidebar(id="sidebar")
            with Vertical(id="centre"):
                yield Transcript(id="transcript")
                yield Static(id="activity")
                yield Composer()
            # The config pane (selects, text area, inputs) is mounted just after this screen's
            # first frame, so that the transcript and composer show sooner.
        yield Footer()

    def on_mount(self) -> None:
        if self._first_overview is not None:  # keys were read before the first frame
            self.query_one(Sidebar).show_providers(self._first_overview, "", None)
        composer = self.query_one(Composer)
        if self._typed_while_starting:
            composer.insert(self._typed_while_starting)
        # At once, not after the messages already queued (composer.focus() would be): keys
        # pressed while the app was starting are queued, and must reach the composer.
        self.set_focus(composer)
        self.set_interval(0.5, self._tick_activity)
        self._load(overview=self._first_overview)  # the keys were read a moment ago
        self._check_local_runtime()
        self.call_after_refresh(self._mount_config_pane)

    async def _mount_config_pane(self) -> None:
        pane = ConfigPane(id="config")
        pane.display = self._shown_by_user.get("#config", self.size.width >= NARROW)
        await self.query_one("#body").mount(pane)
        self._mounted_pane = pane  # only now are its fields composed and safe to fill
        if self.state is not None:
            self._fill_config_pane(pane, self.state)

    def _config_pane(self) -> ConfigPane | None:
        return self._mounted_pane

    def _fill_config_pane(self, pane: ConfigPane, state: ChatState) -> None:
        pane.show(state.bot, state.models, state.global_key, state.bot_key)
        pane.show_key_in_use(state.key_in_use)

    # Loading -------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="load")
    def _load(
        self,
        bot_id: int | None = None,
        conversation_id: int | None = None,
        transcript: bool = True,
        overview: KeyOverview | None = None,
    ) -> None:
        self.context.writer.wait_idle()
        try:
            state = read_state(self.context, bot_id, conversation_id, overview)
        except ByokError as error:
            self.app.call_from_thread(self.notify, error.one_line(), severity="error")
            return
        self.post_message(StateLoaded(state, transcript=transcript))

    @work(exclusive=True, group="local-runtime")
    async def _check_local_runtime(self) -> None:
        from byok_tui.providers.registry import providers

        local = [p for p in providers() if not p.needs_key]
        if not local:
            return
        # httpx is imported lazily (start-up does not pay for it); import it off the event
        # loop here so that the first keystrokes after the first frame do not stall.
        await asyncio.to_thread(importlib.import_module, "httpx")
        try:
            await self.context.client.list_models(local[0])
            running = True
        except ByokError:
            running = False
        self.post_message(LocalRuntimeChecked(running))

    def on_state_loaded(self, message: StateLoaded) -> None:
        state = self.state = message.state
        sidebar = self.query_one(Sidebar)
        sidebar.show_providers(state.overview, state.bot.config.provider, self.local_running)
        sidebar.show_bots(state.bots, state.bot.id)
        sidebar.show_conversations(
            state.conversations, state.conversation.id if state.conversation else None
        )
        if message.transcript:
            self.query_one(Transcript).show_messages(state.messages)
        pane = self._config_pane()
        if pane is not None:  # else it is filled from self.state when it mounts
            self._fill_config_pane(pane, state)
        self._show_title()
        if state.overview.error is not None:
            self.notify(state.overview.error.one_line(), severity="error", timeout=15)

    def on_local_runtime_checked(self, message: LocalRuntimeChecked) -> None:
        self.local_running = message.running
        if self.state is not None:
            self.query_one(Sidebar).show_providers(
                self.state.overview, self.state.bot.config.provider, message.running
            )

    def _show_title(self) -> None:
        if self.state is None:
            return
        config = self.state.bot.config
        provider = get_provider(config.provider)
        self.app.sub_title = f"{config.name} · {provider.display_name} · {config.model}"

    # Sidebar -------------------------------------------------------------------------------

    def on_sidebar_provider_chosen(self, message: Sidebar.ProviderChosen) -> None:
        if self.state is None or message.provider_id == self.state.bot.config.provider:
            return
        provider = get_provider(message.provider_id)
        config = BotConfig(
            self.state.bot.config.name,
            provider.id,
            provider.default_model,
            self.state.bot.config.system_prompt,
            self.state.bot.config.temperature,
            self.state.bot.config.max_tokens,
        )
        self._save_config(config, reload_transcript=False)

    def on_sidebar_bot_chosen(self, message: Sidebar.BotChosen) -> None:
        self._load(message.bot_id)

    def on_sidebar_conversation_chosen(self, message: Sidebar.ConversationChosen) -> None:
        if self.state is not None:
            self._load(self.state.bot.id, message.conversation_id)

    @on(Button.Pressed, "#open-settings")
    def _settings_button(self) -> None:
        self.app.action_open_settings()  # type: ignore[attr-defined]

    # Config pane ---------------------------------------------------------------------------

    def _save_config(self, config: BotConfig, *, reload_transcript: bool) -> None:
        if self.state is None:
            return
        bot_id, store = self.state.bot.id, self.context.store
        self.context.writer.submit(
            f"bot:{bot_id}",
            lambda: store.update_bot(bot_id, config),
            lambda error: self.app.call_from_thread(self.notify, str(error), severity="error"),
        )
        conversation = self.state.conversation
        self._load(bot_id, conversation.id if conversation else 0, transcript=reload_transcript)

    def on_config_pane_config_edited(self, message: ConfigPane.ConfigEdited) -> None:
        if self.state is None or message.config == self.state.bot.config:
            return
        provider_changed = message.config.provider != self.state.bot.config.provider
        if provider_changed:
            message.config = BotConfig(
                message.config.name,
                message.config.provider,
                get_provider(message.config.provider).default_model,
                message.config.system_prompt,
                message.config.temperature,
                message.config.max_tokens,
            )
            self._save_config(message.config, reload_transcript=False)
            return
        bot_id, store, config = self.state.bot.id, self.context.store, message.config
        self.context.writer.submit(f"bot:{bot_id}", lambda: store.update_bot(bot_id, config))

    def on_config_pane_global_key_edited(self, message: ConfigPane.GlobalKeyEdited) -> None:
        keys, entry, value = (
            self.context.services.store,
            entry_name(message.provider_id),
            message.value,
        )
        self.context.writer.submit(
            f"key:{entry}",
            lambda: keys.set(entry, value),  # saved on input (seed 3); empty unsets
            lambda error: self.app.call_from_thread(self.notify, str(error), severity="error"),
        )
        self._refresh_key_in_use()

    def on_config_pane_bot_key_edited(self, message: ConfigPane.BotKeyEdited) -> None:
        if self.state is None:
            return
        bot_id, store, value = self.state.bot.id, self.context.store, message.value
        self.context.writer.submit(f"bot-key:{bot_id}", lambda: store.set_bot_key(bot_id, value))
        self._refresh_key_in_use()

    @work(thread=True, exclusive=True, group="key-in-use")
    def _refresh_key_in_use(self) -> None:
        self.context.writer.wait_idle()
        if self.state is None:
            return
        try:
            bot = self.context.store.bot(self.state.bot.id)
            line = key_in_use(self.context, bot)
        except ByokError as error:
            line = error.one_line()
        self.app.call_from_thread(self._show_key_in_use, line)

    def _show_key_in_use(self, line: str) -> None:
        if self.state is not None:
            self.state.key_in_use = line  # what the pane shows if it mounts later
        pane = self._config_pane()
        if pane is not None:
            pane.show_key_in_use(line)

    # Sending -------------------------------------------------------------------------------

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
            "provider and kept in its logs. Send it anyway?"
        )
        self.app.push_screen(ConfirmDialog(question, yes="Send anyway"), decided)

    def _send_new(self, text: str) -> None:
        # The message is drawn once its request is on the wire, or after ECHO_GRACE if that
        # takes longer: a frame drawn first would hold the request back by its length.
        self._unechoed = text
        self.set_timer(ECHO_GRACE, self._echo)
        self._start_send(text)

    def _echo(self) -> None:
        if self._unechoed is not None:
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

    @work(exclusive=True, group="send")
    async def _send_worker(self, text: str | None) -> None:
        context = self.context
        if not context.writer.idle:
            await asyncio.to_thread(context.writer.wait_idle)  # a key typed just now is saved
        if self.state is None:
            return
        bot = await asyncio.to_thread(context.store.bot, self.state.bot.id)
        conversation = self.state.conversation
        if conversation is None:
            title = " ".join((text or "New chat").split())[:60]
            conversation = await asyncio.to_thread(context.store.create_conversation, bot.id, title)
            self.post_message(ConversationStarted(conversation))
        stopped = False
        slice_started = time.perf_counter()
        first_words = True
        unopened: list[str] = []  # the reply's meta line, until the reply is shown

        def open_reply() -> None:  # once the request is on the wire
            self._echo()
            if unopened:
                self.post_message(ReplyOpened(unopened.pop()))

        try:
            async for event in context.conversations.send(
                bot, conversation, text, on_sent=open_reply
            ):
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
        except StorageError as error:
            self.post_message(ReplyFailed(error, unsent=text))
        except ByokError as error:
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
        text, reasoning = self._incoming.take()
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
            self.on_reply_text_ready(ReplyTextReady())
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
        self.on_reply_text_ready(ReplyTextReady())  # what arrived before the end is shown
        reply, self._reply = self._reply, None
        if reply is not None:
            reply.finish()
            if message.stopped:
                reply.set_meta(reply._meta + " · stopped, partial reply kept", partial=True)
        self._wait_until = 0.0
        self._activity_started = 0.0
        self._tick_activity()
        self._refresh_key_in_use()

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
            activity.update(
                Text(f"⏳ Rate limited: retrying in {seconds} s (Esc cancels)"), layout=False
            )
            activity.set_class(True, "busy")
            return
        if self._wait_until > now:
            seconds = int(self._wait_until - now) + 1
            activity.update(
                Text(f"⏳ Waiting {seconds} s for the rate limit… (Esc stops)"), layout=False
            )
        elif self._busy:
            dots = "." * (1 + int((now - self._activity_started) * 2) % 3)
            activity.update(Text(f"● Reply on its way{dots:<3} (Esc stops)"), layout=False)
        else:
            activity.update("", layout=False)
        activity.set_class(bool(self._busy), "busy")

    # Actions -------------------------------------------------------------------------------

    def action_stop_reply(self) -> None:
        self._retry_at = 0.0
        if self._busy and self._send is not None:
            self._send.cancel()

    def action_retry(self) -> None:
        if self._busy or self.state is None or self.state.conversation is None:
            return
        self._start_send(None)

    def action_new_conversation(self) -> None:
        if self.state is None or self._busy:
            return
        self.state.conversation = None
        self.query_one(Transcript).show_messages([])
        self.query_one(Sidebar).show_conversations(self.state.conversations, None)
        self.query_one(Composer).focus()

    def action_toggle_sidebar(self) -> None:
        self._toggle("#sidebar")

    def action_toggle_config(self) -> None:
        self._toggle("#config")

    def _toggle(self, selector: str) -> None:
        widget = self.query_one(selector)
        shown = not widget.display
        self._shown_by_user[selector] = shown
        widget.display = shown

    def on_resize(self, event: Resize) -> None:
        for selector, limit in (("#config", NARROW), ("#sidebar", TINY)):
            if selector not in self._shown_by_user:
                for widget in self.query(selector):
                    widget.display = event.size.width >= limit

    def action_copy_message(self) -> None:
        text = self.query_one(Transcript).text_to_copy()
        if not text:
            self.notify("No message to copy yet.")
            return
        # A key pasted into a conversation is not copied on to wherever the clipboard goes.
        self.app.copy_to_clipboard(redact_known_secrets(text))
        self.notify("Copied to the clipboard.")

    def action_edit_in_editor(self) -> None:
        """Write the message in $VISUAL or $EDITOR; the editor gets no provider keys."""
        import os
        import shlex
        import subprocess
        import tempfile
        from pathlib import Path

        from byok_tui.child_env import child_environment

        composer = self.query_one(Composer)
        command = shlex.split(os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi")
        fd, name = tempfile.mkstemp(prefix="byok-message-", suffix=".md")  # 0600
        path = Path(name)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(composer.text)
            try:
                with self.app.suspend():
                    result = subprocess.run([*command, name], env=child_environment(), check=False)
            except SuspendNotSupported:  # headless: nothing to hand over, just run it
                result = subprocess.run(
                    [*command, name], env=child_environment(), check=False, capture_output=True
                )
            if result.returncode == 0:
                composer.text = path.read_text(encoding="utf-8").rstrip("\n")
            else:
                self.notify(
                    f"The editor exited with status {result.returncode}; "
                    "the message was not changed.",
                    severity="warning",
                )
        except OSError as error:
            self.notify(f"Cannot run the editor {command[0]!r}: {error.strerror}", severity="error")
        finally:
            path.unlink(missing_ok=True)
        composer.focus()

    def action_rename_conversation(self) -> None:
        if self.state is None or self.state.conversation is None:
            return
        conversation = self.state.conversation

        def rename(title: str | None) -> None:
            if title and self.state is not None:
                store = self.context.store
                self.context.writer.submit(
                    f"rename:{conversation.id}",
                    lambda: store.rename_conversation(conversation.id, title),
                )
                self._load(self.state.bot.id, conversation.id, transcript=False)

        self.app.push_screen(TextDialog("Rename conversation", conversation.title), rename)

    def action_delete_conversation(self) -> None:
        if self.state is None or self.state.conversation is None or self._busy:
            return
        conversation = self.state.conversation

        def delete(confirmed: bool | None) -> None:
            if confirmed and self.state is not None:
                store = self.context.store
                self.context.writer.submit(
                    f"delete:{conversation.id}",
                    lambda: store.delete_conversation(conversation.id),
                )
                self._load(self.state.bot.id, 0)

        self.app.push_screen(
            ConfirmDialog(f"Delete the conversation “{conversation.title}” and its messages?"),
            delete,
        )

    def refresh_keys(self) -> None:
        """Called when Settings closes: keys may have changed there."""
        if self.state is not None:
            conversation = self.state.conversation
            self._load(self.state.bot.id, conversation.id if conversation else 0, transcript=False)
