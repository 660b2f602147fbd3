"""The first frame: the provider sidebar with every key's state, and the composer, ready for
keys, drawn before the chat screen's modules are loaded.

People judge a terminal client by how soon they can type. This screen draws the chat screen's
header, provider rows and footer bar with plain text, one widget each (the real header, option
list and footer cost several times as much, and each widget of the first frame ~1 ms on two
shared cores: in 14 widgets it reached the terminal ~7 ms later than in these 6), and the real
composer where the chat screen has it, focused; it imports nothing else, and is replaced by
the chat screen as soon as that is loaded:
the app starts loading it once this frame is on the terminal. Nothing typed here is lost: the
composer's text, and any message sent (Enter) or file pasted meanwhile, are handed to the chat
screen's composer, which sends or attaches them once the conversation is open.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import NamedTuple

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static
from textual.widgets.text_area import Selection

from byok_tui.core.key_records import KeyOverview
from byok_tui.core.registry import providers
from byok_tui.screens.side_panes import TINY
from byok_tui.widgets.composer import Composer
from byok_tui.widgets.provider_rows import pending_label, provider_label


# A NamedTuple, not a dataclass: its module loads before the first frame (launch.py says why).
class EarlyInput(NamedTuple):
    """What the user did before the chat screen existed, for its composer to carry on."""

    text: str
    """The composer's text, as typed so far."""
    selection: Selection
    """Where the cursor (and any selection) was in it."""
    sent: tuple[Composer.Submitted | Composer.PathPasted, ...]
    """Messages sent with Enter and files pasted, in order: sent or attached once the chat
    screen is up (new messages each, for the chat screen's composer to post)."""


class StartHeader(Widget):
    """Textual's Header as the chat screen has it, in one line: its icon, and the title centred
    between the icon and the space its clock would take."""

    ICON = " ⭘"
    ICON_WIDTH = 8
    CLOCK_WIDTH = 10

    def __init__(self, title: Content) -> None:
        super().__init__(id="start-header")
        self._title = title

    def render(self) -> Content:
        between = max(0, self.size.width - self.ICON_WIDTH - self.CLOCK_WIDTH)
        return Content.assemble(
            self.ICON.ljust(self.ICON_WIDTH),
            self._title.center(between, ellipsis=True),
            " " * self.CLOCK_WIDTH,
        )


class StartSidebar(Widget):
    """The chat screen's sidebar as text: its heading, and each provider's row on the option
    list's background (start.tcss styles the heading)."""

    COMPONENT_CLASSES = {"start-sidebar--heading"}

    def __init__(self, rows: list[Text]) -> None:
        super().__init__(id="sidebar")
        self._rows = rows

    def render(self) -> Content:
        return Content("\n").join(
            [
                Content(),
                Content.assemble(" ", ("Providers", ".start-sidebar--heading")),
                *(
                    Content.from_rich_text(row).extend_right(self.size.width).stylize("on $surface")
                    for row in self._rows
                ),
            ]
        )


class StartScreen(Screen[None]):
    """Shown as the app's default screen; its styles are in start.tcss (the app's CSS_PATH)."""

    class Drawn(Message):
        """The first frame is on the terminal: time to load the chat screen."""

    def __init__(self, overview: KeyOverview | None) -> None:
        super().__init__()
        self._overview = overview
        self._sent: list[Composer.Submitted | Composer.PathPasted] = []

    async def early_input(self) -> EarlyInput:
        """What was typed, sent and pasted here, to hand to the chat screen: once every key
        already handed to the composer is taken. A key the app forwarded waits in the
        composer's queue until it runs, and what its Enter or a pasted path makes waits in
        the queues on its way up to this screen: two rounds along that way take both."""
        composer = self.query_one(Composer)
        way_up = [node for node in composer.ancestors_with_self if isinstance(node, Widget)]
        for _round in range(2):
            for node in way_up:
                taken = asyncio.get_running_loop().create_future()
                if node.call_later(taken.set_result, None):  # after what is queued there
                    await taken
        sent = tuple(replace(message) for message in self._sent)
        return EarlyInput(composer.text, composer.selection, sent)

    def compose(self) -> ComposeResult:
        yield StartHeader(self.app.format_title(self.app.title, self.app.sub_title))
        with Horizontal(id="body"):  # the composer at its foot
            yield StartSidebar(self._provider_rows())
            yield Composer()
        yield Static(id="start-footer")

    def _provider_rows(self) -> list[Text]:
        if self._overview is None:  # the keys are still being read (screens/chat.py has them)
            return [pending_label(provider.display_name) for provider in providers()]
        return [provider_label(status, "", None) for status in self._overview.statuses]

    def on_mount(self) -> None:
        self.query_one("#sidebar").display = self.size.width >= TINY
        self.set_focus(self.query_one(Composer))
        # Posted to the app behind any key already queued there, so those keys reach the
        # composer before the app starts loading the chat screen.
        self.call_after_refresh(self.app.post_message, self.Drawn())

    def show_progress(self, done: int, total: int) -> None:
        """A long upgrade of the database, as it goes (the chat screen waits for it)."""
        said = f" Indexing messages for search (once, after an upgrade): {done:,} of {total:,}"
        self.query_one("#start-footer", Static).update(Text(said))

    def on_composer_submitted(self, message: Composer.Submitted) -> None:
        message.stop()
        self._sent.append(message)

    def on_composer_path_pasted(self, message: Composer.PathPasted) -> None:
        message.stop()
        self._sent.append(message)

    def on_key(self, event: events.Key) -> None:
        """Text typed with the composer unfocused (a click elsewhere) still goes into it."""
        composer = self.query_one(Composer)
        if event.is_printable and event.character is not None and not composer.has_focus:
            event.stop()
            composer.insert(event.character)
            self.set_focus(composer)

    def on_paste(self, event: events.Paste) -> None:
        """Pasted with the composer unfocused: pasted into it, as if it had been focused."""
        composer = self.query_one(Composer)
        if composer.has_focus:
            return  # the composer's own paste, bubbling up
        event.stop()
        composer.post_message(events.Paste(event.text))
        self.set_focus(composer)
