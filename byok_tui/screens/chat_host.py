"""What the chat screen's parts read and call: its state, its data service, and opening a bot
and conversation (only the newest read is shown).

`ChatScreen` (chat.py) is this screen with its handlers; the parts it hands the work to
(`BotActions`, `ConversationActions`, `MessageActions`, `ChatStatus`) take a `ChatHost`, so
they never import the screen that imports them.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

from textual import work
from textual.screen import Screen

from byok_tui.app_services.app_data import AppData
from byok_tui.app_services.chat_state import ChatState
from byok_tui.core.errors import ByokError
from byok_tui.core.money import format_usd
from byok_tui.core.records import KeyOverview
from byok_tui.core.registry import get_provider
from byok_tui.screens.bot_settings import BotSettingsPane
from byok_tui.screens.chat_column import ChatColumn
from byok_tui.screens.chat_messages import StateLoaded, StateLoadFailed
from byok_tui.screens.side_panes import SidePanes
from byok_tui.screens.start import EarlyInput
from byok_tui.widgets.markdown_parts import warm_up


class ChatHost(Screen[None]):
    """The chat screen's state and loading, which its parts share."""

    def __init__(
        self,
        data: AppData,
        overview: KeyOverview | None = None,
        early: EarlyInput | None = None,
        *,
        first_state: ChatState | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`first_state`: what to open on, read already (None: read once mounted)."""
        super().__init__()
        self.data = data
        self._clock = clock  # what the column's countdowns read (tests move it on)
        self.state: ChatState | None = None
        self._first_overview = overview
        self._billed_since_load = 0.0  # replies priced since the state was read
        self._early = early  # what was typed and sent on the start screen
        self._first_state = first_state
        self.panes = SidePanes(self)
        # The config pane, once mounted (after the first frame, or when first shown if it
        # starts hidden): only then are its fields composed and safe to fill.
        self.config_pane: BotSettingsPane | None = None
        # Until the start has made the pane or decided not to (hidden at this width, it is
        # made when first shown), a toggle is a choice the start carries out.
        self._config_pane_due = True
        self._config_pane_made = asyncio.Lock()  # made once, whoever asks first
        # The bot and conversation being opened: (bot id, conversation id), None for the
        # latest (or the default bot), 0 for a new conversation. While one is being opened
        # every reload reads it, so a reload (a config edit, a key change) never undoes it.
        self._wanted: tuple[int | None, int | None] = (None, None)
        self._transcript_due = True  # being opened: the next read shows its transcript
        self._load_generation = 0  # reads started; only the newest one is shown
        self._last_opened: tuple[int, int | None] | None = None  # as saved for the next start
        self._reveal: int | None = None  # a message to scroll to once its conversation is open
        self.focus_new_answer = False  # an answer asked again from a focused reply

    @property
    def started(self) -> bool:
        """The start is over: the config pane is up, or left to be made when first shown."""
        return not self._config_pane_due

    @property
    def config_pane_left_unmade(self) -> bool:
        """The start is over and left the pane to be made when first shown."""
        return self.started and self.config_pane is None

    async def _config_pane_mounted(self) -> BotSettingsPane:
        """The config pane, mounted if it was not, shown as `panes` says at this width."""
        async with self._config_pane_made:
            if self.config_pane is not None:
                return self.config_pane
            pane = BotSettingsPane(self.data, id="config")
            pane.display = False  # mounted unseen; shown in its kept place in one step
            body = self.query_one("#body")
            await body.mount(pane)
            body.styles.padding = 0
            pane.display = self.panes.shown_at("#config", self.size.width)
            self.config_pane = pane
            self.panes.fit()
            if self.state is not None:
                self._fill_config_pane(pane, self.state)
            return pane

    @work(group="config-pane")
    async def show_config_pane(self, focus: str | None = None) -> None:
        """Show the config pane, made now if it was not yet; focus its field `focus` (an id)."""
        pane = await self._config_pane_mounted()
        if not pane.display:
            self.panes.toggle("#config")
        if focus is not None:
            pane.query_one(focus).focus()

    def _fill_config_pane(self, pane: BotSettingsPane, state: ChatState) -> None:
        others = {bot.name for bot in state.bots if bot.id != state.bot.id}
        pane.show(state.bot, state.models, state.global_key, state.bot_key, others)
        config = state.bot.config
        takes = get_provider(config.provider).model(config.model).takes_tools
        note = state.tools.problem or (
            f"{config.model} takes no tools: none is offered to it." if takes is False else ""
        )
        pane.show_tools(state.tools.servers, state.tools.chosen, note)
        pane.show_key_in_use(state.key_in_use.line)
        pane.show_spend(state.spend)

    def show_chat(
        self, bot_id: int | None, conversation_id: int | None, *, reveal: int | None = None
    ) -> None:
        """Show this bot and conversation (None: the latest; 0: a new conversation), scrolled
        to the message `reveal` if given."""
        self._wanted = (bot_id, conversation_id)
        self._reveal = reveal
        self._transcript_due = True
        self.read_again()

    def open_first(self) -> None:
        """Show what the screen opens on: read already, or read now."""
        first, self._first_state = self._first_state, None
        if first is None:
            self.read_again()
            return
        self._load_generation += 1
        self.column.opening()
        # Shown once the screen's first frame is drawn, as a read in a thread was: shown
        # before it, its ~100 ms of widgets held that frame back, and the keys typed
        # meanwhile waited for them.
        loaded = StateLoaded(first, transcript=True, generation=self._load_generation)
        self.call_after_refresh(self.post_message, loaded)

    # What drawing replies needs, loaded once the screen is up (ChatScreen.StartedUp) and
    # before any reply is composed: imported on the event loop while a thread imported it
    # too, the screen waited on the import lock (~30 ms when the app opens on a
    # conversation). Only a head start: should it fail, drawing a reply loads what it
    # needs (and says what is wrong).
    @work(thread=True, exclusive=True, group="warm-up")
    def warm_up_replies(self) -> None:
        with contextlib.suppress(Exception):
            warm_up()

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
        self.post_message(StateLoaded(state, transcript=transcript, generation=generation))

    def _remember_opened(self) -> None:
        """Save the bot and conversation on screen: the next start opens them again."""
        if self.state is None:
            return
        conversation = self.state.conversation
        opened = (self.state.bot.id, conversation.id if conversation else None)
        if opened != self._last_opened:
            self._last_opened = opened
            self.data.remember_opened(*opened)

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

    @property
    def column(self) -> ChatColumn:
        return self.query_one(ChatColumn)
