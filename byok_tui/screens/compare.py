"""Compare: the message sent to two to four models at once, one column a target, streaming
side by side (tabs, 1-4 to switch, where a column would be narrower than 40 cells). Escape
stops every reply still coming (then goes back); `s` stops the column in focus; `k` keeps
its reply as the conversation's, the others staying its alternatives. Below the columns a
composer takes the next message as the replies come (`c`; Tab moves through the columns and
it): what is typed there is the chat composer's text at once (kept as its draft is), and it
is there when the compare ends.

Every send is the data service's (app_data.send): stored as it arrives, in the request log
and the spend, each target with its own key, budgets and pacing. The screen dismisses with
the reply kept (None: none chosen; the replies are kept as alternatives all the same).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, Callable
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Footer, Static, TabbedContent, TabPane
from textual.worker import Worker

from byok_tui.app_services.app_data import AppData
from byok_tui.chat.compare import Outcome, send_in_turn
from byok_tui.core.attachments import Attachment
from byok_tui.core.bindings import COMPARE_KEYS, textual_bindings
from byok_tui.core.errors import ByokError
from byok_tui.core.records import Bot, BotConfig, Conversation
from byok_tui.core.sanitize import clean_line
from byok_tui.widgets.compare_column import CompareColumn
from byok_tui.widgets.composer import Composer

# Narrower than this, a column is a tab.
NARROWEST_COLUMN = 40


class CompareScreen(Screen[int | None]):
    DEFAULT_CSS = """
    CompareScreen #asked { padding: 0 1; color: $text-muted; height: auto; max-height: 3; }
    CompareScreen #columns { height: 1fr; }
    CompareScreen TabbedContent { height: 1fr; }
    CompareScreen TabPane { padding: 0; height: 1fr; }
    CompareScreen Composer { height: 4; }
    """
    BINDINGS = textual_bindings(COMPARE_KEYS)

    def __init__(
        self,
        data: AppData,
        bot: Bot,
        conversation: Conversation,
        said: tuple[str, tuple[Attachment, ...]],
        configs: list[BotConfig],
        typed: Callable[[str], None],
        draft: str = "",
    ) -> None:
        """`typed`: called with the composer's text whenever it changes (the chat composer
        takes it, so that it is kept as a draft is and is there after the compare); `draft`:
        what the composer starts with (the chat composer's text)."""
        super().__init__()
        self._typed, self._draft = typed, draft
        self.data = data
        self._bot, self._conversation = bot, conversation
        self._said = said
        self._configs = configs
        self.columns = [
            CompareColumn(Outcome(c.provider, c.model), n, c.max_tokens, id=f"target-{n}")
            for n, c in enumerate(configs, 1)
        ]
        self._sends: dict[int, Worker[None]] = {}  # by column number

    def compose(self) -> ComposeResult:
        asked = clean_line(self._said[0])
        yield Static(Text(f"Compared: {asked[:300]}"), id="asked")
        if self.app.size.width // len(self.columns) < NARROWEST_COLUMN:
            with TabbedContent(id="tabs"):
                for column in self.columns:
                    label = f"{column.number} {column.outcome.provider}"
                    with TabPane(label, id=f"tab-{column.number}"):
                        yield column
        else:
            with Horizontal(id="columns"):
                yield from self.columns
        composer = Composer()
        composer.text = self._draft
        composer.border_title = "Next message · waits in the chat's composer until this ends"
        yield composer
        yield Footer()

    def on_mount(self) -> None:
        self.columns[0].focus()
        self.run_worker(self._send_all(), group="compare-start")

    async def _send_all(self) -> None:
        """Every target's send, started in turn (chat/compare.py send_in_turn); then all
        stream together, each in its column."""
        data, conversation = self.data, self._conversation
        before = await asyncio.to_thread(data.compare.newest_id, conversation.id)

        def start(
            number: int, sending: AsyncGenerator[object, None], started: asyncio.Event
        ) -> None:
            column = self.columns[number]
            self._sends[column.number] = self.run_worker(
                self._stream(column, sending, started), group=f"target-{column.number}"
            )

        try:
            await send_in_turn(
                self._configs,
                self._said,
                False,
                lambda outgoing: data.send(self._bot, conversation, outgoing),
                start,
                lambda: asyncio.to_thread(data.compare.prompt_stored, conversation.id, before),
            )
        except ByokError as error:  # the message was not stored: nothing went to the others
            for other in self.columns[1:]:
                other.ended(error)

    async def _stream(
        self, column: CompareColumn, sending: AsyncGenerator[object, None], started: asyncio.Event
    ) -> None:
        from byok_tui.chat.reply_events import ReplyStarted

        column.outcome.begun = time.monotonic()
        column.started()
        try:
            async with contextlib.aclosing(sending):
                async for event in sending:
                    if isinstance(event, ReplyStarted):
                        started.set()
                    column.add(event)
        except ByokError as error:
            column.ended(error)
        except asyncio.CancelledError:
            column.ended(stopped=True)
            raise
        else:
            column.ended()
        finally:
            started.set()
            self.refresh_bindings()

    # The next message, written meanwhile ------------------------------------------------

    def on_text_area_changed(self, event: Composer.Changed) -> None:
        self._typed(event.text_area.text)

    def on_composer_submitted(self, message: Composer.Submitted) -> None:
        message.stop()
        self.query_one(Composer).text = message.text  # given back: never lose what was typed
        self.notify(
            "Your message waits: it is in the chat's composer once this compare ends "
            "(k keeps a reply, Escape stops them or goes back)."
        )

    def on_composer_path_pasted(self, message: Composer.PathPasted) -> None:
        message.stop()  # files are attached in the chat; here the path is typed
        self.query_one(Composer).insert(message.text)

    def action_write(self) -> None:
        self.query_one(Composer).focus()

    def _focused_column(self) -> CompareColumn | None:
        """The column in focus (a widget in it, or its tab); None when focus is elsewhere."""
        focused = self.focused
        for column in self.columns:
            if focused is not None and (focused is column or column in focused.ancestors):
                return column
        with contextlib.suppress(NoMatches):  # side by side: no tabs
            active = self.query_one(TabbedContent).active
            return next((c for c in self.columns if f"tab-{c.number}" == active), None)
        return None

    def action_stop_or_close(self) -> None:
        running = [number for number, worker in self._sends.items() if worker.is_running]
        if not running and not any(column.state == "waiting" for column in self.columns):
            self.dismiss(None)  # none kept: the replies stay alternatives of one another
            return
        self.workers.cancel_group(self, "compare-start")
        for number in running:
            self._sends[number].cancel()
        for column in self.columns:
            if column.state == "waiting":
                column.ended(stopped=True)

    def action_stop_one(self) -> None:
        column = self._focused_column()
        if column is None:
            return
        worker = self._sends.get(column.number)
        if worker is not None and worker.is_running:
            worker.cancel()

    def action_keep(self) -> None:
        column = self._focused_column()
        if column is None:
            return
        reply = column.outcome.reply_id
        if column.running or reply is None or not column.has_text:
            self.notify("Keep a reply once it has ended (s stops it).", severity="warning")
            return
        self.run_worker(self._keep(reply), group="keep", exclusive=True)

    async def _keep(self, reply_id: int) -> None:
        try:
            await asyncio.to_thread(self.data.compare.keep, reply_id)
        except ByokError as error:
            self.notify(error.one_line(), severity="error")
            return
        self.dismiss(reply_id)

    def action_focus_target(self, index: int) -> None:
        if index >= len(self.columns):
            return
        column = self.columns[index]
        with contextlib.suppress(NoMatches):  # side by side: no tabs
            self.query_one(TabbedContent).active = f"tab-{column.number}"
        column.focus()


def compare_from_composer(screen: Any) -> None:
    """The chat screen's Compare: the composer's message, to targets the user names."""
    from byok_tui.core.redaction import secrets_in

    text = screen.query_one(Composer).text.strip()
    if screen.column.busy:
        screen.notify("A reply is on its way: wait, or press Escape to stop it.")
    elif not text:
        screen.notify("Type the message to compare first, then press F5.")
    elif secrets_in(text):
        screen.notify("The message holds a key or secret: send it on its own (Enter) instead.")
    else:
        screen.run_worker(_compare(screen, text), exclusive=True, group="compare")


async def _compare(screen: Any, text: str) -> None:
    from byok_tui.chat.compare import parse_targets, target_configs
    from byok_tui.screens.dialogs import TextDialog
    from byok_tui.screens.reading_chips import ReadingChips

    target = await screen.column.target_for(text)
    if target is None:
        return
    bot, conversation = target
    remembered = await asyncio.to_thread(screen.data.compare.targets, bot.id)

    def problem(given: str) -> str | None:
        try:
            target_configs(bot, parse_targets(given))
        except ByokError as error:
            return error.one_line()
        return None

    given = await screen.app.push_screen_wait(
        TextDialog(
            "Compare with (2 to 4 PROVIDER:MODEL, commas between)",
            remembered or f"{bot.config.provider}:{bot.config.model}, ",
            problem,
        )
    )
    if not given:
        return
    configs = target_configs(bot, parse_targets(given))
    screen.data.compare.remember_targets(bot.id, given)
    composer = screen.query_one(Composer)
    # Keys typed after F5, before the dialog had the focus, follow the message: kept.
    now = composer.text
    composer.text = now.strip().removeprefix(text) if now.strip().startswith(text) else now
    files = tuple(screen.query_one(ReadingChips).take())

    def typed(meanwhile: str) -> None:
        composer.text = meanwhile
        composer.move_cursor(composer.document.end)

    compare = CompareScreen(
        screen.data, bot, conversation, (text, files), configs, typed, composer.text
    )
    kept = await screen.app.push_screen_wait(compare)
    chosen = next((c.outcome for c in compare.columns if c.outcome.reply_id == kept), None)
    if chosen is not None:  # stored as it was kept (CompareData.keep)
        screen.notify(
            f"Kept {chosen.provider} · {chosen.model}: this conversation's next messages go "
            "to it (the bot's own model is unchanged)."
        )
    screen.show_chat(bot.id, conversation.id, reveal=kept)
    composer.focus()


def use_the_bot_s_model(screen: Any) -> None:
    """The conversation's next messages go to the bot's own model again (a compare's reply
    was kept in it)."""
    state = screen.state
    conversation = state.conversation if state is not None else None
    if conversation is None or not conversation.continues_on:
        screen.notify("This conversation's messages already go to the bot's model.")
        return
    screen.data.compare.use_bot_model(conversation.id)
    config = state.bot.config
    screen.notify(f"This conversation's next messages go to {config.model} again.")
    screen.read_again()
