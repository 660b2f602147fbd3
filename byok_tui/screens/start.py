"""The first frame: the provider sidebar with every key's state, drawn before the chat screen's
modules are loaded.

People judge a terminal client by how soon it shows something useful. This screen draws the
chat screen's header, provider rows and footer bar with plain text (Static widgets cost a
fraction of the real header, option lists and footer), imports nothing else, and is replaced
by the chat screen as soon as that is loaded: the app starts loading it once this frame is on
the terminal. Nothing here is interactive, so nothing moves or stops working when the chat
screen arrives; what is typed meanwhile is kept and handed to its composer.
"""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from byok_tui.records import KeyOverview
from byok_tui.registry import providers
from byok_tui.screens.side_panes import TINY
from byok_tui.widgets.provider_rows import pending_label, provider_label


class StartScreen(Screen[None]):
    """Shown as the app's default screen; its styles are in start.tcss (the app's CSS_PATH)."""

    class Drawn(Message):
        """The first frame is on the terminal: time to load the chat screen."""

    def __init__(self, overview: KeyOverview | None) -> None:
        super().__init__()
        self._overview = overview
        self._typed: list[str] = []

    @property
    def typed(self) -> str:
        """What was typed or pasted before the composer existed."""
        return "".join(self._typed)

    def compose(self) -> ComposeResult:
        with Horizontal(id="start-header"):  # Textual's Header: icon, centred title, clock space
            yield Static("⭘", id="start-icon")
            yield Static(self.app.format_title(self.app.title, self.app.sub_title), id="title")
            yield Static(id="start-clock-space")
        with Horizontal(id="body"), Vertical(id="sidebar"):
            yield Static("Providers", classes="heading")
            yield Static(self._provider_rows(), id="providers")
        yield Static(id="start-footer")

    def _provider_rows(self) -> Text:
        if self._overview is None:  # the keys are still being read (screens/chat.py has them)
            rows = [pending_label(provider.display_name) for provider in providers()]
        else:
            rows = [provider_label(status, "", None) for status in self._overview.statuses]
        return Text("\n").join(rows)

    def on_mount(self) -> None:
        self.query_one("#sidebar").display = self.size.width >= TINY
        # Posted to the app behind any key already queued there, so those keys reach this
        # screen (and are kept) before the app switches to the chat screen.
        self.call_after_refresh(self.app.post_message, self.Drawn())

    def show_progress(self, done: int, total: int) -> None:
        """A long upgrade of the database, as it goes (the chat screen waits for it)."""
        said = f" Indexing messages for search (once, after an upgrade): {done:,} of {total:,}"
        self.query_one("#start-footer", Static).update(Text(said))

    def on_key(self, event: events.Key) -> None:
        if event.is_printable and event.character is not None:
            event.stop()
            self._typed.append(event.character)

    def on_paste(self, event: events.Paste) -> None:
        event.stop()
        self._typed.append(event.text)
