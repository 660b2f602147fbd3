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

import time
from collections.abc import Callable
from dataclasses import replace

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.events import Key, Resize
from textual.message import Message
from textual.widgets import Button, Header, Input, TextArea

from byok_tui.app_services.app_data import AppData
from byok_tui.app_services.chat_state import ChatState
from byok_tui.core.bindings import CHAT_KEYS, textual_bindings
from byok_tui.core.errors import ByokError
from byok_tui.core.records import KeyOverview
from byok_tui.core.registry import get_provider
from byok_tui.screens.bot_settings import BotSettingsPane
from byok_tui.screens.chat_bots import BotActions
from byok_tui.screens.chat_column import ChatColumn
from byok_tui.screens.chat_conversations import ConversationActions
from byok_tui.screens.chat_host import ChatHost
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
from byok_tui.screens.start import EarlyInput
from byok_tui.widgets.code_copies import CopyWanted
from byok_tui.widgets.composer import Composer
from byok_tui.widgets.config_pane import ConfigPane
from byok_tui.widgets.footer import Footer
from byok_tui.widgets.message_views import (
    AlternativeWanted,
    ContinueWanted,
    EditWanted,
    RegenerateWanted,
    ReplyView,
    UserMessage,
)
from byok_tui.widgets.sidebar import Sidebar

# Longest the config pane waits for a message sent on the start screen to leave.
FIRST_SEND_FIRST = 2.0


class ChatScreen(ChatHost):
    CSS_PATH = "chat.tcss"  # read already with the app's own (app.py): nothing parsed again
    BINDINGS = textual_bindings(CHAT_KEYS)
    # The focus starts in the composer. Textual's default (the first focusable widget, the
    # sidebar) gave it to the sidebar as the screen was composed, and on_mount took it
    # away: each start restyled the sidebar twice and the footer's keys changed twice.
    AUTO_FOCUS = "Composer"

    class StartedUp(Message):
        """The screen's last part (the config pane) is up, or left to be made when first
        shown: the app has finished starting."""

    def __init__(
        self,
        data: AppData,
        overview: KeyOverview | None = None,
        early: EarlyInput | None = None,
        *,
        first_state: ChatState | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(data, overview, early, first_state=first_state, clock=clock)
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
            if any(isinstance(message, Composer.Submitted) for message in self._early.sent):
                self.column.send_coming()
        # At once, not after the messages already queued (composer.focus() would be): keys
        # pressed while the app was starting are queued, and must reach the composer.
        self.set_focus(composer)
        self.open_first()
        self._status.check_local_runtime()
        for notice in self.data.notices():  # e.g. the data folder's permissions tightened
            self.notify(notice, severity="warning", timeout=15)
        # The config pane's place is kept from the first frame: the transcript is laid out
        # at its width once. Laid out wider first, every reply shown was drawn twice (ten
        # replies of 12 KB: ~0.65 s more of CPU just after the start).
        kept = self.panes.kept_for("#config", ConfigPane.WIDTH)
        self.query_one("#body").styles.padding = (0, kept, 0, 0)
        self.call_after_refresh(self._mount_config_pane)

    # A worker, not awaited in the screen's own queue: its selects, inputs and text area
    # take ~50-100 ms to mount, and the screen drew nothing meanwhile (keys typed then
    # were drawn 60-95 ms after they were typed; 40-55 ms with the mount in a worker).
    # A message sent on the start screen goes first: mounted meanwhile, the pane held its
    # request back by as long.
    @work(group="config-pane")
    async def _mount_config_pane(self) -> None:
        try:
            await self.column.request_left(FIRST_SEND_FIRST)
            # Hidden at this width (under NARROW columns), it is made when first shown: a
            # quarter of the start's CPU (~80 ms of ~320 ms) and its memory, for a pane that
            # may never show.
            if self.panes.shown_at("#config", self.size.width):
                await self._config_pane_mounted()
        finally:  # the app's start ends even if this failed (its error is shown)
            self._config_pane_due = False
            self.post_message(self.StartedUp())
            # Not while the screen comes: its ~80 ms of imports in a thread slowed that.
            self.warm_up_replies()

    # Loading -------------------------------------------------------------------------------

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

    def on_local_runtime_checked(self, message: LocalRuntimeChecked) -> None:
        self._status.local_runtime_checked(message)

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
        if self.config_pane_left_unmade:
            self.show_config_pane()  # not made yet: it starts hidden at this width
            return
        self.panes.toggle("#config")  # or, while the start still makes it, comes as chosen

    def on_resize(self, event: Resize) -> None:
        self.panes.resized(event.size.width)
        if self.config_pane_left_unmade and self.panes.shown_at("#config", event.size.width):
            self.show_config_pane()  # the terminal grew wide enough for it
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

    def action_compare(self) -> None:
        from byok_tui.screens.compare import compare_from_composer

        compare_from_composer(self)

    def action_use_bot_model(self) -> None:
        from byok_tui.screens.compare import use_the_bot_s_model

        use_the_bot_s_model(self)

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
