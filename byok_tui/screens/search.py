"""Search every conversation: a field, and the hits as you type (title, bot, role, date and
the words around the match, the match marked). Enter opens the conversation at that message.

Hits hold outside text (titles, replies): shown as the text they are, never parsed as markup.
The search runs in a thread; typing never waits for it.
"""

from __future__ import annotations

import asyncio
import time

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from byok_tui.app_services.app_data import AppData
from byok_tui.core.bindings import SEARCH_KEYS, textual_bindings
from byok_tui.core.errors import ByokError
from byok_tui.core.records import MATCH_END, MATCH_START, SearchHit

# Typing pauses this long before the search runs: one search per word, not per key.
TYPING_PAUSE = 0.12
HOW_TO = 'Words must all match · word* a prefix · "a phrase" · newest first'


def marked(snippet: str) -> Text:
    """The snippet with each match (between MATCH_START and MATCH_END) in reverse."""
    text = Text(no_wrap=True, overflow="ellipsis")
    for number, part in enumerate(snippet.replace(MATCH_END, MATCH_START).split(MATCH_START)):
        text.append(part, style="reverse" if number % 2 else "")
    return text


def hit_label(hit: SearchHit) -> Text:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(hit.created))
    where = Text(f"{hit.title} · {hit.bot_name} · {hit.role} · {when}", style="dim")
    where.no_wrap, where.overflow = True, "ellipsis"
    return Text("\n").join([where, marked(hit.snippet)])


class SearchScreen(ModalScreen[SearchHit | None]):
    DEFAULT_CSS = """
    SearchScreen { align: center top; }
    SearchScreen > Vertical { width: 90%; max-width: 120; height: 80%; margin-top: 2;
                              background: $panel; border: round $accent; padding: 0 1; }
    SearchScreen #search-status { color: $text-muted; height: 1; }
    SearchScreen OptionList { height: 1fr; border: none; }
    """
    BINDINGS = [
        *textual_bindings(SEARCH_KEYS),
        Binding("down", "to_hits", show=False),
    ]

    def __init__(self, data: AppData, typed: str = "") -> None:
        """`typed`: the last search, offered again."""
        super().__init__()
        self._data = data
        self.last_typed = typed
        self._hits: list[SearchHit] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Input(self.last_typed, placeholder="Search every conversation", id="search-query")
            yield Static(HOW_TO, id="search-status", markup=False)
            yield OptionList(id="search-hits")

    def on_mount(self) -> None:
        self.query_one("#search-query", Input).focus()
        if self.last_typed:
            self._search(self.last_typed)

    def on_input_changed(self, event: Input.Changed) -> None:
        self.last_typed = event.value
        self._search(event.value)

    @work(exclusive=True, group="search")
    async def _search(self, typed: str) -> None:
        await asyncio.sleep(TYPING_PAUSE)
        if not typed.strip():
            self._show([], HOW_TO)
            return
        try:
            hits = await asyncio.to_thread(self._data.search, typed)
        except ByokError as error:
            self._show([], error.one_line())
            return
        said = f"{len(hits)} found" if hits else "Nothing found"
        self._show(hits, f"{said} · {HOW_TO}")

    def _show(self, hits: list[SearchHit], status: str) -> None:
        if not self.is_current:
            return  # closed while the search ran: its widgets may be gone already
        self._hits = hits
        self.query_one("#search-status", Static).update(status)
        option_list = self.query_one("#search-hits", OptionList)
        option_list.clear_options()
        options: list[Option | None] = []
        for number, hit in enumerate(hits):
            options += [None] if number else []  # a rule between two hits
            options.append(Option(hit_label(hit), id=str(number)))
        option_list.add_options(options)
        if hits:
            option_list.highlighted = 0

    def on_input_submitted(self, _event: Input.Submitted) -> None:
        highlighted = self.query_one("#search-hits", OptionList).highlighted_option
        if highlighted is not None:
            self.dismiss(self._hits[int(highlighted.id or 0)])

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self._hits[int(event.option.id or 0)])

    def action_to_hits(self) -> None:
        if self._hits:
            self.query_one("#search-hits", OptionList).focus()

    def action_close(self) -> None:
        self.dismiss(None)
