"""The chat screen: provider sidebar, conversation column, per-bot config pane.

The screen composes them and routes messages between them. It opens bots and conversations
(only the newest read is shown), saves a bot's new provider, and runs the bot and
conversation actions (new, rename, delete). Sending and the reply in progress belong to the
conversation column (screens/chat_column.py); saving the rest of what the config pane edits
to the pane (screens/bot_settings.py); which side panes show, and where, to `SidePanes`
(side_panes.py). Workers call the data service and post typed messages
(screens/chat_messages.py); only the handlers touch widgets.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding
from textual.containers import Horizontal
from textual.events import Key, Resize
from textual.screen import Screen
from textual.widgets import Button, Header, Input, TextArea

from byok_tui.app_data import AppData
from byok_tui.bindings import CHAT_KEYS, textual_bindings
from byok_tui.chat_state import ChatState, KeyInUse
from byok_tui.errors import ByokError
from byok_tui.pricing import format_usd
from byok_tui.records import BotConfig, Conversation, KeyOverview, SearchHit
from byok_tui.redaction import redact_keys
from byok_tui.registry import get_provider
from byok_tui.screens.bot_settings import BotSettingsPane
from byok_tui.screens.chat_column import ChatColumn
from byok_tui.screens.chat_messages import (
    BotCreated,
    BotDeleted,
    KeyInUseFound,
    LocalRuntimeChecked,
    OlderConversationsRead,
    SpendRead,
    StateLoaded,
    StateLoadFailed,
)
from byok_tui.screens.dialogs import ConfirmDialog, TextDialog
from byok_tui.screens.side_panes import SidePanes
from byok_tui.screens.start import EarlyInput
from byok_tui.widgets.code_copies import CopyWanted
from byok_tui.widgets.composer import Composer
from byok_tui.widgets.footer import Footer
from byok_tui.widgets.markdown_text import warm_up
from byok_tui.widgets.message_views import (
    AlternativeWanted,
    ContinueWanted,
    EditWanted,
    RegenerateWanted,
    ReplyView,
    UserMessage,
)
from byok_tui.widgets.sidebar import Sidebar
from byok_tui.widgets.transcript import EMPTY_HINT, Transcript


class ChatScreen(Screen[None]):
    CSS_PATH = "chat.tcss"
    BINDINGS = textual_bindings(CHAT_KEYS)

    def __init__(
        self,
        data: AppData,
        overview: KeyOverview | None = None,
        early: EarlyInput | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.data = data
        self._clock = clock  # what the column's countdowns read (tests move it on)
        self.state: ChatState | None = None
        self._first_overview = overview
        self._billed_since_load = 0.0  # replies priced since the state was read
        self._early = early  # what was typed and sent on the start screen
        # Whether each local runtime answered its probe (a provider not probed is not here).
        self.local_running: dict[str, bool] = {}
        self._panes = SidePanes(self)
        self._mounted_pane: BotSettingsPane | None = None
        # The bot and conversation being opened: (bot id, conversation id), None for the
        # latest (or the default bot), 0 for a new conversation. While one is being opened
        # every reload reads it, so a reload (a config edit, a key change) never undoes it.
        self._wanted: tuple[int | None, int | None] = (None, None)
        self._transcript_due = True  # being opened: the next read shows its transcript
        self._load_generation = 0  # reads started; only the newest one is shown
        self._last_opened: tuple[int, int | None] | None = None  # as saved for the next start
        self._reveal: int | None = None  # a message to scroll to once its conversation is open
        self._searched = ""  # the last search, offered again by ctrl+f

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="body"):
            yield Sidebar(id="sidebar")
            yield ChatColumn(self.data, clock=self._clock, id="centre")
            # The config pane (selects, text area, inputs) is mounted just after this screen's
            # first frame, so that the transcript and composer show sooner.
        yield Footer()

    def on_mount(self) -> None:
        if self._first_overview is not None:  # keys were read before the first frame
            self.query_one(Sidebar).show_providers(self._first_overview, "", {})
        composer = self.query_one(Composer)
        if self._early is not None:
            composer.text, composer.selection = self._early.text, self._early.selection
            for message in self._early.sent:  # sent or attached once the conversation is open
                composer.post_message(message)
        # At once, not after the messages already queued (composer.focus() would be): keys
        # pressed while the app was starting are queued, and must reach the composer.
        self.set_focus(composer)
        self._reload()
        self._check_local_runtime()
        for notice in self.data.notices():  # e.g. the data folder's permissions tightened
            self.notify(notice, severity="warning", timeout=15)
        self.call_after_refresh(self._mount_config_pane)

    async def _mount_config_pane(self) -> None:
        pane = BotSettingsPane(self.data, id="config")
        pane.display = self._panes.shown_at("#config", self.size.width)
        await self.query_one("#body").mount(pane)
        self._mounted_pane = pane  # only now are its fields composed and safe to fill
        self._panes.fit()
        if self.state is not None:
            self._fill_config_pane(pane, self.state)

    def _config_pane(self) -> BotSettingsPane | None:
        return self._mounted_pane

    def _fill_config_pane(self, pane: BotSettingsPane, state: ChatState) -> None:
        others = {bot.name for bot in state.bots if bot.id != state.bot.id}
        pane.show(state.bot, state.models, state.global_key, state.bot_key, others)
        pane.show_key_in_use(state.key_in_use.line)
        pane.show_spend(state.spend)

    # Loading -------------------------------------------------------------------------------

    def _open(self, bot_id: int | None, conversation_id: int | None) -> None:
        """Show this bot and conversation (None: the latest; 0: a new conversation)."""
        self._wanted = (bot_id, conversation_id)
        self._transcript_due = True
        self._reload()

    def _reload(self) -> None:
        """Read again what is shown, or being opened: keys, bots, the bot's config."""
        self._load_generation += 1
        self._column.opening()  # a message sent meanwhile waits for this read
        if not self._transcript_due and self.state is not None:  # what is on screen
            conversation = self.state.conversation
            self._wanted = (self.state.bot.id, conversation.id if conversation else 0)
        bot_id, conversation_id = self._wanted
        self._load(self._load_generation, bot_id, conversation_id, self._transcript_due)

    @work(thread=True, exclusive=True, group="load")
    def _load(
        self,
        generation: int,
        bot_id: int | None,
        conversation_id: int | None,
        transcript: bool,
    ) -> None:
        try:
            state = self.data.chat_state(bot_id, conversation_id)
        except ByokError as error:
            self.post_message(StateLoadFailed(error, generation=generation))
            return
        # What drawing replies needs is loaded here, before any reply is composed: imported
        # on the event loop while a thread imported it too, the screen waited on the import
        # lock (~30 ms when the app opens on a conversation). Only a head start: should it
        # fail, drawing a reply loads what it needs (and says what is wrong).
        with contextlib.suppress(Exception):
            warm_up()
        self.post_message(StateLoaded(state, transcript=transcript, generation=generation))

    @work(exclusive=True, group="local-runtime")
    async def _check_local_runtime(self) -> None:
        from byok_tui.registry import providers

        # Only the built-in runtime: a server the user defined is called when they use it.
        local = [p for p in providers() if not p.needs_key and not p.custom]
        if not local:
            return
        try:
            # What it answers is what the model list offers: the models actually pulled.
            await self.data.list_models(local[0], purpose="probe")
            running = True
        except ByokError:
            running = False
        self.post_message(LocalRuntimeChecked(local[0].id, running))

    def on_state_load_failed(self, message: StateLoadFailed) -> None:
        if message.generation == self._load_generation:
            self._column.open_failed()  # a message waiting is told why it cannot be sent
        self.notify(message.error.one_line(), severity="error", timeout=15)

    def on_state_loaded(self, message: StateLoaded) -> None:
        if message.generation != self._load_generation:
            return  # a newer read is on its way
        state = self.state = message.state
        self._billed_since_load = 0.0
        self._show_providers()
        sidebar = self.query_one(Sidebar)
        sidebar.show_bots(state.bots, state.bot.id)
        current = state.conversation.id if state.conversation else None
        sidebar.show_conversations(state.conversations, current, state.older_conversations)
        self.query_one(Transcript).set_empty_hint(self._empty_hint(state.key_in_use))
        if message.transcript:
            self._transcript_due = False
        pane = self._config_pane()
        if pane is not None:  # else it is filled from self.state when it mounts
            self._fill_config_pane(pane, state)
        self._show_title()
        if state.overview.error is not None:
            self.notify(state.overview.error.one_line(), severity="error", timeout=15)
        if state.moved_to is not None:
            provider = get_provider(state.moved_to).display_name
            self.notify(f"The Default bot now uses {provider}, the provider of the key you added.")
        if state.lost_provider is not None:
            now = get_provider(state.bot.config.provider).display_name
            self.notify(
                f"The bot {state.bot.name} used the provider {state.lost_provider}, which is "
                f"not defined any more; it now uses {now}. Define it again (Settings, or "
                "`byok-tui provider add`) and choose it in the bot's settings to go back.",
                severity="warning",
                timeout=20,
            )
        if state.unsent and self._column.give_back_unsent(state.unsent):
            self.notify("A message that was not sent before byok-tui closed is back below.")
        self._remember_opened()
        page = state.page if message.transcript else None
        self._column.opened(state.bot.id, state.conversation, page)
        if page is not None and self._reveal is not None:
            self.call_after_refresh(self._column.reveal, self._reveal)
            self._reveal = None

    def _empty_hint(self, key: KeyInUse) -> str:
        if key.found or self.state is None:
            return EMPTY_HINT
        return (
            f"{key.line} yet. Press ctrl+s to add one in Settings, or paste it in the bot's "
            "config pane (ctrl+o). Then type below and press Enter to send."
        )

    def _remember_opened(self) -> None:
        """Save the bot and conversation on screen: the next start opens them again."""
        if self.state is None:
            return
        conversation = self.state.conversation
        opened = (self.state.bot.id, conversation.id if conversation else None)
        if opened != self._last_opened:
            self._last_opened = opened
            self.data.remember_opened(*opened)

    def on_local_runtime_checked(self, message: LocalRuntimeChecked) -> None:
        self.local_running[message.provider_id] = message.running
        self._show_providers()
        local = self.state is not None and self.state.bot.config.provider == message.provider_id
        if local and message.running:
            self._reload()  # its model list now holds the models it has

    def _show_providers(self) -> None:
        """Each provider's key state, and what its rate limits say when it matters."""
        if self.state is not None:
            state = self.state
            self.query_one(Sidebar).show_providers(
                state.overview, state.bot.config.provider, self.local_running, state.limits
            )

    def _show_title(self) -> None:
        if self.state is None:
            return
        config = self.state.bot.config
        provider = get_provider(config.provider)
        title = f"{config.name} · {provider.display_name} · {config.model}"
        spent = self._billed_since_load + self.state.spent
        if spent:
            title += f" · {format_usd(spent)} this chat"
        self.app.sub_title = title

    # Sidebar -------------------------------------------------------------------------------

    def on_sidebar_provider_chosen(self, message: Sidebar.ProviderChosen) -> None:
        if self.state is None or message.provider_id == self.state.bot.config.provider:
            return
        provider = get_provider(message.provider_id)
        config = replace(self.state.bot.config, provider=provider.id, model=provider.default_model)
        self._save_config(config)

    def on_sidebar_bot_chosen(self, message: Sidebar.BotChosen) -> None:
        self._open(message.bot_id, None)

    def on_sidebar_conversation_chosen(self, message: Sidebar.ConversationChosen) -> None:
        if self.state is not None:
            self._open(self.state.bot.id, message.conversation_id)

    @on(Button.Pressed, "#open-settings")
    async def _settings_button(self) -> None:
        await self.run_action("app.open_settings")

    @on(Button.Pressed, "#open-search")
    def _search_button(self) -> None:
        self.action_search()

    @on(Button.Pressed, "#new-bot")
    def _new_bot_button(self) -> None:
        self.action_new_bot()

    def on_sidebar_delete_wanted(self, message: Sidebar.DeleteWanted) -> None:
        if self.state is None:
            return
        if message.kind == "bot":
            self.action_delete_bot(message.item_id)
            return
        conversation = next((c for c in self.state.conversations if c.id == message.item_id), None)
        if conversation is not None:
            self._ask_to_delete_conversation(conversation)

    def on_sidebar_older_conversations_wanted(
        self, message: Sidebar.OlderConversationsWanted
    ) -> None:
        if self.state is not None:
            self._read_older_conversations(self.state.bot.id, message.last)

    @work(thread=True, group="older-conversations")
    def _read_older_conversations(self, bot_id: int, last: Conversation) -> None:
        try:
            older = self.data.older_conversations(bot_id, last)
        except ByokError as error:
            self.post_message(OlderConversationsRead(bot_id, [], error))
            return
        self.post_message(OlderConversationsRead(bot_id, older))

    def on_older_conversations_read(self, message: OlderConversationsRead) -> None:
        if message.error is not None:
            self.notify(message.error.one_line(), severity="error", timeout=15)
        if self.state is None or self.state.bot.id != message.bot_id:
            return  # another bot is shown now
        self.state.conversations += message.conversations
        self.state.older_conversations -= len(message.conversations)
        self.query_one(Sidebar).add_older(message.conversations, self.state.older_conversations)

    # Bots ----------------------------------------------------------------------------------

    def action_new_bot(self) -> None:
        """Ask for a name; the new bot starts from this bot's provider and model."""

        def named(name: str | None) -> None:
            if name:
                self._create_bot(name)

        self.app.push_screen(TextDialog("Name of the new bot", ""), named)

    @work(thread=True, group="bots")
    def _create_bot(self, name: str) -> None:
        state = self.state
        if state is None:
            return
        config = BotConfig(name, state.bot.config.provider, state.bot.config.model)
        try:
            bot = self.data.create_bot(config)
        except ByokError as error:
            self.app.call_from_thread(self.notify, error.one_line(), severity="error")
            return
        self.post_message(BotCreated(bot.id))

    def on_bot_created(self, message: BotCreated) -> None:
        self._open(message.bot_id, None)
        pane = self._config_pane()
        if pane is not None:  # its editor: shown, at the name
            if not pane.display:
                self._panes.toggle("#config")
            pane.query_one("#bot-name").focus()

    def action_delete_bot(self, bot_id: int | None = None) -> None:
        if self.state is None:
            return
        bot = next((b for b in self.state.bots if b.id == bot_id), self.state.bot)
        if self._column.busy and bot.id == self.state.bot.id:
            self.notify("A reply is on its way: stop it (Escape) before deleting its bot.")
            return

        def delete(confirmed: bool | None) -> None:
            if confirmed:
                self._delete_bot(bot.id, bot.name)

        question = f"Delete the bot “{bot.name}” and all its conversations?"
        self.app.push_screen(ConfirmDialog(question), delete)

    @work(thread=True, group="bots")
    def _delete_bot(self, bot_id: int, name: str) -> None:
        try:
            self.data.delete_bot(bot_id)
        except ByokError as error:
            self.app.call_from_thread(self.notify, error.one_line(), severity="error")
            return
        self.post_message(BotDeleted(bot_id, name))

    def on_bot_deleted(self, message: BotDeleted) -> None:
        bot_id, name = message.bot_id, message.name
        self.notify(f"Deleted the bot “{name}” and its conversations.")
        if self.state is not None and self.state.bot.id == bot_id:
            self._open(None, None)  # the bot last used, else the default bot
        else:
            self._reload()

    # Config pane ---------------------------------------------------------------------------

    def _save_config(self, config: BotConfig) -> None:
        if self.state is None:
            return
        before = self.state.bot
        if config.provider != before.config.provider and before.has_key:
            self._ask_about_kept_key(before.id, before.config.provider, config.provider)
        self.data.save_bot_config(self.state.bot.id, config)
        self._reload()

    def _ask_about_kept_key(self, bot_id: int, was: str, now: str) -> None:
        """The bot's own key stays with the provider it was set under (the store never gives
        it for another): remove it, or keep it for when the bot goes back."""
        was_name, now_name = get_provider(was).display_name, get_provider(now).display_name

        def answered(remove: bool | None) -> None:
            if remove:
                self.data.save_bot_key(bot_id, None)
                self._reload()

        question = (
            f"This bot's own key is for {was_name}: it is never sent to {now_name}. Remove "
            f"it, or keep it for when the bot uses {was_name} again?"
        )
        dialog = ConfirmDialog(question, yes="Remove it", no=f"Keep it for {was_name}")
        self.app.push_screen(dialog, answered)

    def on_bot_settings_pane_provider_chosen(self, message: BotSettingsPane.ProviderChosen) -> None:
        self._save_config(message.config)

    def on_bot_settings_pane_bot_saved(self, message: BotSettingsPane.BotSaved) -> None:
        if self.state is None or self.state.bot.id != message.bot_id:
            return
        renamed = message.config.name != self.state.bot.config.name
        self.state.bot = replace(self.state.bot, config=message.config)  # what is saved now
        if renamed:
            bot = self.state.bot
            self.state.bots = [bot if b.id == bot.id else b for b in self.state.bots]
            self.query_one(Sidebar).show_bots(self.state.bots, bot.id)
            self._show_title()

    def on_bot_settings_pane_keys_changed(self, _message: BotSettingsPane.KeysChanged) -> None:
        self._refresh_key_in_use()

    @property
    def _column(self) -> ChatColumn:
        return self.query_one(ChatColumn)

    def on_chat_column_conversation_started(self, message: ChatColumn.ConversationStarted) -> None:
        if self.state is not None:
            self.state.conversation = message.conversation
            self.state.conversations.insert(0, message.conversation)
            self.query_one(Sidebar).show_conversations(
                self.state.conversations, message.conversation.id, self.state.older_conversations
            )

    def on_chat_column_reply_finished(self, message: ChatColumn.ReplyFinished) -> None:
        if message.cost_usd:
            self._billed_since_load += message.cost_usd
            self._show_title()
        if message.branched and self.state is not None and self.state.conversation is not None:
            self._open(self.state.bot.id, self.state.conversation.id)  # shows the alternatives
        self._refresh_key_in_use()  # the key may have been changed while the reply streamed
        self._remember_opened()  # a conversation the reply's message started

    @work(thread=True, exclusive=True, group="key-in-use")
    def _refresh_key_in_use(self) -> None:
        if self.state is None:
            return
        key = self.data.key_in_use(self.state.bot.id)
        config = self.state.bot.config
        # A message, not call_from_thread: it is handled in order with the screen's own
        # teardown, so a line found while the app closes never meets half-removed widgets.
        self.post_message(KeyInUseFound(key))
        self.post_message(
            SpendRead(self.data.spend(config.provider, config.model), self.data.limit_notes())
        )

    def on_spend_read(self, message: SpendRead) -> None:
        if self.state is not None:
            self.state.spend = message.spend  # what the pane shows if it mounts later
            self.state.limits = message.limits
            self._show_providers()
        pane = self._config_pane()
        if pane is not None:
            pane.show_spend(message.spend)

    def on_key_in_use_found(self, message: KeyInUseFound) -> None:
        key = message.key
        if self.state is not None:
            self.state.key_in_use = key  # what the pane shows if it mounts later
        self.query_one(Transcript).set_empty_hint(self._empty_hint(key))
        pane = self._config_pane()
        if pane is not None:
            pane.show_key_in_use(key.line)

    # Actions -------------------------------------------------------------------------------

    def action_new_conversation(self) -> None:
        if self.state is None or self._column.busy:
            return
        self.state.conversation = None
        self._column.new_conversation()
        sidebar = self.query_one(Sidebar)
        sidebar.show_conversations(self.state.conversations, None, self.state.older_conversations)
        self.query_one(Composer).focus()

    def on_key(self, event: Key) -> None:
        """Text typed where it cannot go (a list, a message) goes to the composer."""
        focused = self.focused
        if not event.is_printable or isinstance(focused, Input | TextArea | Button):
            return
        if isinstance(focused, UserMessage | ReplyView) and any(
            binding.key == event.key for binding in focused.BINDINGS if isinstance(binding, Binding)
        ):
            return  # a key of the focused message (e: edit, r: regenerate)
        if event.key == "question_mark":
            return  # outside the composer, ? opens the help
        if focused is None or any(
            node.id in ("sidebar", "transcript") for node in focused.ancestors_with_self
        ):
            event.stop()
            composer = self.query_one(Composer)
            self.set_focus(composer)
            composer.insert(event.character or "")

    def action_search(self) -> None:
        from byok_tui.screens.search import SearchScreen

        if isinstance(self.app.screen, SearchScreen):
            return
        search = SearchScreen(self.data, self._searched)

        def chosen(hit: SearchHit | None) -> None:
            self._searched = search.last_typed
            if hit is None:
                return
            self._reveal = hit.message_id
            self._open(hit.bot_id, hit.conversation_id)

        self.app.push_screen(search, chosen)

    def action_toggle_sidebar(self) -> None:
        self._panes.toggle("#sidebar")

    def action_toggle_config(self) -> None:
        self._panes.toggle("#config")

    def on_resize(self, event: Resize) -> None:
        self._panes.resized(event.size.width)

    def action_copy_message(self) -> None:
        text = self.query_one(Transcript).text_to_copy()
        if not text:
            self.notify("No message to copy yet.")
            return
        self._copy(text, "the message")

    def on_copy_wanted(self, message: CopyWanted) -> None:
        self._copy(message.text, f"the {message.what}")

    def _copy(self, text: str, what: str) -> None:
        """Put `text` on the clipboard with the terminal's clipboard sequence (OSC 52, which
        reaches the local clipboard over SSH too)."""
        # A key pasted into a conversation is not copied on to wherever the clipboard goes:
        # the clipboard is redacted like every document that leaves byok-tui.
        copied = redact_keys(text)
        self.app.copy_to_clipboard(copied)
        if copied != text:
            self.notify(f"Copied {what}; your key in it was replaced by [REDACTED].")
        else:
            self.notify(f"Copied {what} to the clipboard.")

    def action_edit_in_editor(self) -> None:
        """Write the message in $VISUAL or $EDITOR; the editor gets no provider keys."""
        from byok_tui.external_editor import edit_text

        composer = self.query_one(Composer)
        try:
            with self.app.suspend():
                edited = edit_text(composer.text, capture=False)
        except SuspendNotSupported:  # headless: no terminal to hand over, just run it
            edited = edit_text(composer.text, capture=True)
        if edited.text is not None:
            composer.text = edited.text
        elif edited.problem:
            self.notify(edited.problem, severity="warning")
        composer.focus()

    def _no_conversation(self) -> bool:
        """True (and the user is told) when there is no conversation to act on yet."""
        if self.state is not None and self.state.conversation is not None:
            return False
        self.notify("No conversation yet: send a message to start one.")
        return True

    def action_rename_conversation(self) -> None:
        if self._no_conversation() or self.state is None or self.state.conversation is None:
            return
        conversation = self.state.conversation

        def rename(title: str | None) -> None:
            if title and self.state is not None:
                self.data.rename_conversation(conversation.id, title)
                self._reload()

        self.app.push_screen(TextDialog("Rename conversation", conversation.title), rename)

    def action_delete_conversation(self) -> None:
        if self._no_conversation() or self.state is None or self.state.conversation is None:
            return
        self._ask_to_delete_conversation(self.state.conversation)

    def _ask_to_delete_conversation(self, conversation: Conversation) -> None:
        column = self._column
        if column.busy and self.state is not None and self.state.conversation == conversation:
            self.notify("A reply is on its way: stop it (Escape) before deleting the chat.")
            return

        def delete(confirmed: bool | None) -> None:
            if confirmed and self.state is not None:
                self.data.delete_conversation(conversation.id)
                if self.state.conversation == conversation:
                    self._open(self.state.bot.id, 0)
                else:
                    self._reload()

        self.app.push_screen(
            ConfirmDialog(f"Delete the conversation “{conversation.title}” and its messages?"),
            delete,
        )

    def refresh_keys(self) -> None:
        """Called when Settings closes: keys may have changed there."""
        self._reload()

    def action_stop_reply(self) -> None:
        if not self._column.busy and self._column.cancel_edit():
            return
        self._column.stop()

    # Edits, regenerations and their alternatives --------------------------------------------

    def on_edit_wanted(self, message: EditWanted) -> None:
        self._column.begin_edit(message.message_id, message.text)

    def on_regenerate_wanted(self, message: RegenerateWanted) -> None:
        if not self._column.regenerate(message.message_id):
            self.notify("A reply is on its way: wait, or press Escape to stop it.")

    def action_regenerate(self) -> None:
        focused = self.focused
        replies = [r for r in self.query(ReplyView) if r.message_id is not None]
        if isinstance(focused, ReplyView) and focused.message_id is not None:
            self.post_message(RegenerateWanted(focused.message_id))
        elif replies:
            self.post_message(RegenerateWanted(replies[-1].message_id or 0))
        else:
            self.notify("No reply to answer again yet.")

    def action_attach_file(self) -> None:
        def chosen(path: str | None) -> None:
            if path and path.strip():
                self._column.attach(Path(path.strip()))
            self.query_one(Composer).focus()

        self.app.push_screen(TextDialog("Attach a file (its path)", ""), chosen)

    def action_export_markdown(self) -> None:
        if self.state is None or self.state.conversation is None:
            self.notify("No conversation to export yet: send a message first.")
            return
        self._export_markdown(self.state.conversation.id)

    @work(thread=True, exclusive=True, group="export-markdown")
    def _export_markdown(self, conversation_id: int) -> None:
        try:
            path = self.data.export_markdown(conversation_id)
        except ByokError as error:
            self.app.call_from_thread(
                self.notify, f"Export failed: {error.one_line()}", severity="error"
            )
            return
        self.app.call_from_thread(
            self.notify, f"Exported as Markdown (no keys included) to {path}", timeout=10
        )

    def on_continue_wanted(self, message: ContinueWanted) -> None:
        if not self._column.continue_reply(message.message_id):
            self.notify("A reply is on its way: wait, or press Escape to stop it.")

    def action_continue_last(self) -> None:
        replies = self.query(ReplyView)
        last = replies.last() if replies else None
        if last is None or last.message_id is None or not last.has_class("partial"):
            self.notify("The last reply is not cut short: there is nothing to continue.")
            return
        self.post_message(ContinueWanted(last.message_id))

    def action_edit_last(self) -> None:
        sent = [m for m in self.query(UserMessage) if m.message_id is not None]
        if not sent:
            self.notify("No message of yours to edit yet.")
            return
        self._column.begin_edit(sent[-1].message_id or 0, sent[-1].message_text)

    def on_alternative_wanted(self, message: AlternativeWanted) -> None:
        self._switch_alternative(message.message_id, message.step)

    @work(thread=True, exclusive=True, group="alternative")
    def _switch_alternative(self, message_id: int, step: int) -> None:
        try:
            chosen = self.data.switch_alternative(message_id, step)
        except ByokError as error:
            self.app.call_from_thread(self.notify, error.one_line(), severity="error")
            return
        self.app.call_from_thread(self._show_alternative, chosen, step)

    def _show_alternative(self, chosen: int | None, step: int) -> None:
        if chosen is None:
            self.notify(f"No alternative {'before' if step < 0 else 'after'} this one.")
        elif self.state is not None and self.state.conversation is not None:
            self._reveal = chosen
            self._open(self.state.bot.id, self.state.conversation.id)

    def action_retry(self) -> None:
        self._column.retry()
