"""The help screen: every key of the app, by where it works, read from the bindings' data (the
same data the footer, the palette and `--help` read), and what the mouse does."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from byok_tui.core.bindings import (
    APP_KEYS,
    BOT_COMMANDS,
    CHAT_KEYS,
    COMPARE_KEYS,
    COMPOSER_KEYS,
    PALETTE,
    REPLY_KEYS,
    SETTINGS_KEYS,
    SETTINGS_TOPICS,
    SIDEBAR_KEYS,
    USER_MESSAGE_KEYS,
    Key,
)

PALETTE_ONLY = (*BOT_COMMANDS, *SETTINGS_TOPICS)

AREAS: tuple[tuple[str, tuple[Key, ...]], ...] = (
    ("Anywhere", (*APP_KEYS, PALETTE)),
    ("Chat", CHAT_KEYS),
    ("Message box", COMPOSER_KEYS),
    ("Your message, focused (click it or tab to it)", USER_MESSAGE_KEYS),
    ("A reply, focused", REPLY_KEYS),
    ("Sidebar lists", SIDEBAR_KEYS),
    ("Settings", SETTINGS_KEYS),
    ("Compare (F5 in the chat)", COMPARE_KEYS),
    ("Command palette (ctrl+p), no key of their own: type a word of the name", PALETTE_ONLY),
)

MOUSE = (
    "Click a provider, bot or conversation in the sidebar to choose it.",
    "Click a message, then ctrl+t, to copy it; the wheel scrolls the conversation.",
    "Click the left or right half of ‹ 2/3 › under a message to see its alternatives.",
    "Click the footer's keys to run them; ⚙ Settings and + New bot are buttons.",
)


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 96; max-width: 100%; height: auto; max-height: 100%;
        padding: 1 2; background: $panel; border: round $accent;
    }
    HelpScreen .area { text-style: bold; margin-top: 1; color: $accent; }
    HelpScreen #title { margin-top: 0; }
    """
    BINDINGS = [
        Binding("escape,f1,q,question_mark", "dismiss_help", "Close", show=False),
    ]

    def compose(self) -> ComposeResult:
        width = max(len(key.spoken) for _area, keys in AREAS for key in keys)
        with VerticalScroll():
            yield Label("Keys and mouse (Escape closes)", id="title", classes="area")
            for area, keys in AREAS:
                yield Static(Text(area), classes="area")
                named = keys is PALETTE_ONLY  # no key: the name typed in the palette
                shown = max(len(key.description) for key in keys) if named else width
                yield Static(_table(keys, shown))
            yield Static(Text("Mouse"), classes="area")
            yield Static(Text("\n".join(MOUSE)))

    def action_dismiss_help(self) -> None:
        self.dismiss(None)


def _table(keys: tuple[Key, ...], key_width: int) -> Table:
    """Keys on the left, what they do on the right, wrapped in its own column."""
    table = Table(show_header=False, box=None, expand=True, padding=(0, 2, 0, 0))
    table.add_column(width=key_width, no_wrap=True, style="bold")
    table.add_column(ratio=1)
    for key in keys:
        table.add_row(Text(key.spoken or key.description), Text(key.does))
    return table
