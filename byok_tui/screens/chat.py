"""The chat screen: provider sidebar, conversation column, per-bot config pane.

The screen composes them, opens bots and conversations (only the newest read is shown) and
routes messages and actions to what carries them out: sending and the reply in progress to
the conversation column (chat_column.py); the bot actions to `BotActions` (chat_bots.py), the
conversation actions to `ConversationActions` (chat_conversations.py), the actions on
messages to `MessageActions` (message_actions.py); the key, spend and provider lines to
`ChatStatus` (chat_status.py); saving the rest of what the config pane edits to the pane
(bot_settings.py); which side panes show, and where, to `SidePanes` (side_panes.py). Workers
call the data service and post typed messages (chat_messages.py); only the handlers touch
widgets.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import replace

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.events import Key, Resize
from textual.screen import Screen
from textual.widgets import Button, Header, Input, TextArea

from byok_tui.app_data import AppData
from byok_tui.bindings import CHAT_KEYS, textual_bindings
from byok_tui.chat_state import ChatState
from byok_tui.errors import ByokError
from byok_tui.pricing import format_usd
from byok_tui.records import KeyOverview
from byok_tui.registry import get_provider
from byok_tui.screens.bot_settings import BotSettingsPane
from byok_tui.screens.chat_bots import BotActions
from byok_tui.screens.chat_column import ChatColumn
from byok_tui.screens.chat_conversations import ConversationActions
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
from byok_tui.screens.chat_status import ChatStatus
from byok_tui.screens.message_actions import MessageActions
from byok_tui.screens.side_panes import SidePanes
from byok_tui.screens.start import EarlyInput
from byok_tui.widgets.code_copies import CopyWanted
from byok_tui.widgets.composer import Composer
from byok_tui.widgets.footer import Footer
from byok_tui.widgets.markdown_parts import warm_up
from byok_tui.widgets.message_views import (
    AlternativeWanted,
    ContinueWanted,
    EditWanted,
    RegenerateWanted,
    ReplyView,
    UserMessage,
)
from byok_tui.widgets.sidebar import Sidebar


class ChatScreen(Screen[None]):
    CSS_PATH = "chat.tcss"  # read already with the app's own (app.py): nothing parsed again
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
        self.panes = SidePanes(self)
        # The config pane, once mounted (after the first frame): only then are its fields
        # composed and safe to fill.
        self.config_pane: BotSettingsPane | None = None
        # The bot and conversation being opened: (bot id, conversation id), None for the
        # latest (or the default bot), 0 for a new conversation. While one is being opened
        # every reload reads it, so a reload (a config edit, a key change) never undoes it.
        self._wanted: tuple[int | None, int | None] = (None, None)
        self._transcript_due = True  # being opened: the next read shows its transcript
        self._load_generation = 0  # reads started; only the newest one is shown
        self._last_opened: tuple[int, int | None] | None = None  # as saved for the next start
        self._reveal: int | None = None  # a message to scroll to once its conversation is open
        self.focus_new_answer = False  # an answer asked again from a focused reply
        self._status = ChatStatus(self)
        self._bots = BotActions(self)
        self._conversations = ConversationActions(self)
        self._messages = MessageActions(self)

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
        self.read_again()
        self._status.check_local_runtime()
        for notice in self.data.notices():  # e.g. the data folder's permissions tightened
            self.notify(notice, severity="warning", timeout=15)
        self.call_after_refresh(self._mount_config_pane)

    # A worker, not awaited in the screen's own queue: its selects, inputs and text area
    # take ~50-100 ms to mount, and the screen drew nothing meanwhile (keys typed then
    # were drawn 60-95 ms after they were typed; 40-55 ms with the mount in a worker).
    @work(group="config-pane")
    async def _mount_config_pane(self) -> None:
        pane = BotSettingsPane(self.data, id="config")
        pane.display = self.panes.shown_at("#config", self.size.width)
        await self.query_one("#body").mount(pane)
        self.config_pane = pane
        self.panes.fit()
        if self.state is not None:
            self._fill_config_pane(pane, self.state)

    def _fill_config_pane(self, pane: BotSettingsPane, state: ChatState) -> None:
        others = {bot.name for bot in state.bots if bot.id != state.bot.id}
        pane.show(state.bot, state.models, state.global_key, state.bot_key, others)
        pane.show_key_in_use(state.key_in_use.line)
        pane.show_spend(state.spend)

    # Loading -------------------------------------------------------------------------------

    def show_chat(
        self, bot_id: int | None, conversation_id: int | None, *, reveal: int | None = None
    ) -> None:
        """Show this bot and conversation (None: the latest; 0: a new conversation), scrolled
        to the message `reveal` if given."""
        self._wanted = (bot_id, conversation_id)
        self._reveal = reveal
        self._transcript_due = True
        self.read_again()

    def read_again(self) -> None:
        """Read again what is shown, or being opened: keys, bots, the bot's config."""
        self._load_generation += 1
        self.column.opening()  # a message sent meanwhile waits for this read
        if not self._transcript_due and self.state is not None:  # what is on screen
            conversation = self.state.conversation
            self._wanted = (self.state.bot.id, conversation.id if conversation else 0)
        bot_id, conversation_id = self._wanted
        self._load(
            self._load_generation, bot_id, conversation_id, self._transcript_due, self._reveal
        )

    @work(thread=True, exclusive=True, group="load")
    def _load(
        self,
        generation: int,
        bot_id: int | None,
        conversation_id: int | None,
        transcript: bool,
        reveal: int | None = None,
    ) -> None:
        try:
            if reveal is not None:  # a search hit on another branch: that branch is shown
                self.data.show_branch_of(reveal)
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

    def on_state_load_failed(self, message: StateLoadFailed) -> None:
        if message.generation == self._load_generation:
            self.column.open_failed()  # a message waiting is told why it cannot be sent
        self.notify(message.error.one_line(), severity="error", timeout=15)

    def on_state_loaded(self, message: StateLoaded) -> None:
        if message.generation != self._load_generation:
            return  # a newer read is on its way
        state = self.state = message.state
        self._billed_since_load = 0.0
        self._status.loaded(state)
        sidebar = self.query_one(Sidebar)
        sidebar.show_bots(state.bots, state.bot.id)
        current = state.conversation.id if state.conversation else None
        sidebar.show_conversations(state.conversations, current, state.older_conversations)
        if message.transcript:
            self._transcript_due = False
        pane = self.config_pane
        if pane is not None:  # else it is filled from self.state when it mounts
            self._fill_config_pane(pane, state)
        self.show_title()
        self.column.give_back_drafts(state.drafts_left)
        if state.unsent and self.column.give_back_unsent(state.unsent):
            self.notify("A message that was not sent before byok-tui closed is back below.")
        self._remember_opened()
        page = state.page if message.transcript else None
        self.column.opened(state.bot.id, state.conversation, page)
        if page is not None and self._reveal is not None:
            self.call_after_refresh(self.column.reveal, self._reveal)
            self._reveal = None
        if page is not None and self.focus_new_answer:
            self.focus_new_answer = False
            self.call_after_refresh(self._focus_newest_reply)

    def _focus_newest_reply(self) -> None:
        replies = self.query(ReplyView)
        if replies:
            replies.last().focus()

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
        self._status.local_runtime_checked(message)

    def show_title(self) -> None:
        if self.state is None:
            return
        config = self.state.bot.config
        provider = get_provider(config.provider)
        spent = self._billed_since_load + self.state.spent
        cost = f" · {format_usd(spent)} this chat" if spent else ""
        # What fits beside "byok-tui — " and the header's icon: the cost is never the part
        # cut; the provider's name goes first (the model says it), then the model is cut.
        room = max(20, self.app.size.width - 24) - len(cost)
        title = f"{config.name} · {provider.display_name} · {config.model}"
        if len(title) > room:
            title = f"{config.name} · {config.model}"
        if len(title) > room:
            title = title[: max(room - 1, 1)] + "…"
        self.app.sub_title = title + cost

    # Sidebar -------------------------------------------------------------------------------

    def on_sidebar_provider_chosen(self, message: Sidebar.ProviderChosen) -> None:
        if self.state is None or message.provider_id == self.state.bot.config.provider:
            return
        provider = get_provider(message.provider_id)
        config = replace(self.state.bot.config, provider=provider.id, model=provider.default_model)
        self._bots.save_config(config)

    def on_sidebar_bot_chosen(self, message: Sidebar.BotChosen) -> None:
        self.show_chat(message.bot_id, None)

    def on_sidebar_conversation_chosen(self, message: Sidebar.ConversationChosen) -> None:
        if self.state is not None:
            self.show_chat(self.state.bot.id, message.conversation_id)

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
            self._conversations.delete(conversation)

    def on_sidebar_older_conversations_wanted(
        self, message: Sidebar.OlderConversationsWanted
    ) -> None:
        self._conversations.read_older(message.last)

    def on_older_conversations_read(self, message: OlderConversationsRead) -> None:
        self._conversations.older_read(message)

    # Bots and the config pane ----------------------------------------------------------------

    def action_new_bot(self) -> None:
        self._bots.new()

    def on_bot_created(self, message: BotCreated) -> None:
        self._bots.created(message.bot_id)

    def action_delete_bot(self, bot_id: int | None = None) -> None:
        self._bots.delete(bot_id)

    def on_bot_deleted(self, message: BotDeleted) -> None:
        self._bots.deleted(message.bot_id, message.name)

    def on_bot_settings_pane_provider_chosen(self, message: BotSettingsPane.ProviderChosen) -> None:
        self._bots.save_config(message.config)

    def on_bot_settings_pane_bot_saved(self, message: BotSettingsPane.BotSaved) -> None:
        self._bots.saved(message.bot_id, message.config)

    def on_bot_settings_pane_keys_changed(self, _message: BotSettingsPane.KeysChanged) -> None:
        self._status.refresh()

    @property
    def column(self) -> ChatColumn:
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
            self.show_title()
        if message.branched and self.state is not None and self.state.conversation is not None:
            self.show_chat(self.state.bot.id, self.state.conversation.id)  # shows the alternatives
        self._status.refresh()  # the key may have been changed while the reply streamed
        self._remember_opened()  # a conversation the reply's message started

    def on_spend_read(self, message: SpendRead) -> None:
        self._status.spend_read(message)

    def on_key_in_use_found(self, message: KeyInUseFound) -> None:
        self._status.key_in_use_found(message.key, message.overview)

    # Actions -------------------------------------------------------------------------------

    def action_new_conversation(self) -> None:
        if self.state is None or self.column.busy:
            return
        self.state.conversation = None
        self.state.spent, self._billed_since_load = 0.0, 0.0  # the title's cost is this chat's
        self.show_title()
        self.column.new_conversation()
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

    def action_toggle_sidebar(self) -> None:
        self.panes.toggle("#sidebar")

    def action_toggle_config(self) -> None:
        self.panes.toggle("#config")

    def on_resize(self, event: Resize) -> None:
        self.panes.resized(event.size.width)
        self.show_title()  # what fits of it depends on the width

    def refresh_keys(self) -> None:
        """Called when Settings closes: keys may have changed there."""
        self.read_again()

    def catch_up(self) -> None:
        """The terminal gave the app its focus back: what other terminals changed meanwhile
        (a provider, a key, a budget, an import, a spend) is read again from disk. No
        request is made."""
        if self.state is not None and not self.column.busy:
            self._catch_up()

    @work(thread=True, exclusive=True, group="catch-up")
    def _catch_up(self) -> None:
        try:
            self.data.reload_config()
        except ByokError as error:
            self.app.call_from_thread(self.notify, error.one_line(), severity="error")
            return
        self.app.call_from_thread(self.read_again)

    def action_stop_reply(self) -> None:
        if not self.column.busy and self.query_one(Composer).cancel_edit():
            return
        self.column.stop()

    def action_retry(self) -> None:
        self.column.retry()

    def action_search(self) -> None:
        self._conversations.search()

    def action_rename_conversation(self) -> None:
        self._conversations.rename()

    def action_delete_conversation(self) -> None:
        self._conversations.delete_open()

    def action_export_markdown(self) -> None:
        self._conversations.export_markdown()

    # Messages: copy, edit, answer again, continue, alternatives, attach ---------------------

    def action_copy_message(self) -> None:
        self._messages.copy_message()

    def on_copy_wanted(self, message: CopyWanted) -> None:
        self._messages.copy(message.text, f"the {message.what}")

    def action_edit_in_editor(self) -> None:
        self._messages.edit_in_editor()

    def on_edit_wanted(self, message: EditWanted) -> None:
        self.query_one(Composer).begin_edit(message.message_id, message.text)

    def action_edit_last(self) -> None:
        self._messages.edit_last()

    def on_regenerate_wanted(self, message: RegenerateWanted) -> None:
        self._messages.regenerate(message.message_id)

    def action_regenerate(self) -> None:
        self._messages.regenerate_focused()

    def on_continue_wanted(self, message: ContinueWanted) -> None:
        self._messages.continue_reply(message.message_id)

    def action_continue_last(self) -> None:
        self._messages.continue_last()

    def on_alternative_wanted(self, message: AlternativeWanted) -> None:
        self._messages.switch_alternative(message.message_id, message.step)

    def action_attach_file(self) -> None:
        self._messages.attach_file()
