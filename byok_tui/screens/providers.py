"""The providers screen: every provider from the registry and the state of its key.

Reading keys is I/O, so a refresh runs in a thread worker that posts `KeysRead`.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from byok_tui.keys.overview import KeyOverview

COLUMNS = ("Provider", "Entry", "Stored", "Used for calls", "Key")


class ProvidersScreen(Screen[None]):
    CSS_PATH = "providers.tcss"
    BINDINGS = [
        Binding("r", "refresh_keys", "Reload keys", id="providers.reload"),
    ]

    class KeysRead(Message):
        def __init__(self, overview: KeyOverview) -> None:
            super().__init__()
            self.overview = overview

    def __init__(self, overview: KeyOverview, load_overview: Callable[[], KeyOverview]) -> None:
        super().__init__()
        self._overview = overview
        self._load_overview = load_overview

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="store-status")
        yield DataTable(id="providers", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#providers", DataTable)
        table.add_columns(*COLUMNS)
        self._show(self._overview)

    def _show(self, overview: KeyOverview) -> None:
        self._overview = overview
        table = self.query_one("#providers", DataTable)
        table.clear()
        for status in overview.statuses:
            table.add_row(
                status.display_name,
                status.entry or "—",
                "local" if status.entry is None else ("set" if status.stored else "unset"),
                status.describe(),
                status.masked or "—",
                key=status.provider_id,
            )
        banner = self.query_one("#store-status", Static)
        lines = [f"Keys are kept in {overview.location}."]
        lines += list(overview.notices)
        if overview.error is not None:
            lines.append(f"Stored keys could not be read: {overview.error.one_line()}")
        banner.update("\n".join(lines))
        banner.set_class(overview.error is not None, "error")

    def action_refresh_keys(self) -> None:
        self._read_keys()

    @work(thread=True, exclusive=True, group="keys")
    def _read_keys(self) -> None:
        self.post_message(self.KeysRead(self._load_overview()))

    def on_providers_screen_keys_read(self, message: KeysRead) -> None:
        self._show(message.overview)
