"""The Usage screen (spend per day for the last 30 days per provider, and the totals per model)
and the Requests screen (the request log, newest first). Both only read: a worker asks the data
service and posts what it read; nothing here makes a request to a provider.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Label, Sparkline, Static

from byok_tui.app_services.app_data import AppData
from byok_tui.core.bindings import SPEND_SCREEN_KEYS, textual_bindings
from byok_tui.core.errors import ByokError
from byok_tui.core.money import format_usd
from byok_tui.core.registry import get_provider, provider_ids
from byok_tui.spend.request_log import REQUEST_HEADINGS, request_cells
from byok_tui.spend.usage_report import UsageOverview
from byok_tui.widgets.footer import Footer

# The Requests screen shows this many of the latest; `byok-tui requests` shows them all.
REQUESTS_SHOWN = 1_000


def _provider_name(provider_id: str) -> str:
    return get_provider(provider_id).display_name if provider_id in provider_ids() else provider_id


@dataclass
class LedgerRead(Message):
    """What the screen's worker read."""

    value: Any


@dataclass
class ReadFailed(Message):
    error: ByokError


class _LedgerScreen(Screen[None]):
    """A screen that shows what one read of the data service returned (in a worker)."""

    CSS_PATH = "spend.tcss"
    BINDINGS = textual_bindings(SPEND_SCREEN_KEYS)
    HEADING = ""  # the header's sub-title

    def __init__(self, data: AppData) -> None:
        super().__init__()
        self.data = data

    def on_mount(self) -> None:
        self.sub_title = self.HEADING  # this screen's own: the chat's is left as it was
        self._read()

    @work(thread=True, exclusive=True, group="ledger-read")
    def _read(self) -> None:
        try:
            self.post_message(LedgerRead(self.read()))
        except ByokError as error:
            self.post_message(ReadFailed(error))

    def read(self) -> Any:
        """Runs in a worker thread."""
        raise NotImplementedError

    def on_ledger_read(self, message: LedgerRead) -> None:
        self.show(message.value)

    def show(self, value: Any) -> None:
        raise NotImplementedError

    def on_read_failed(self, message: ReadFailed) -> None:
        self.query_one(".hint", Static).update(Text(f"✗ {message.error.one_line()}"))

    def action_close(self) -> None:
        self.dismiss(None)


class UsageScreen(_LedgerScreen):
    HEADING = "Usage"

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="usage"):
            yield Label("Spend per day, last 30 days", classes="section-title")
            yield Static(Text("Reading…"), id="days-hint", classes="hint")
            yield Vertical(id="charts")
            yield Label("Totals per model, last 30 days", classes="section-title")
            yield DataTable(id="totals", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def read(self) -> UsageOverview:
        return self.data.spending.usage_overview()

    def show(self, value: Any) -> None:
        overview: UsageOverview = value
        hint = self.query_one("#days-hint", Static)
        if not overview.providers:
            hint.update(Text("No replies in the last 30 days."))
        else:
            hint.update(
                Text(
                    f"A column per day, {overview.days - 1} days ago on the left to today on "
                    "the right; each line is scaled to its own highest day (its peak)."
                )
            )
        charts = self.query_one("#charts", Vertical)
        for days in overview.providers:
            total = format_usd(days.total_usd)
            unpriced = f" (+{days.unpriced} unpriced)" if days.unpriced else ""
            replies = f"{days.requests:,} repl{'y' if days.requests == 1 else 'ies'}"
            peak = format_usd(max(days.daily_usd))
            name = _provider_name(days.provider_id)
            said = f"{name}: {total}{unpriced} · {replies} · peak {peak}"
            charts.mount(
                Horizontal(
                    Static(Text(said), classes="chart-label"),
                    Sparkline(list(days.daily_usd), summary_function=max, classes="chart"),
                    classes="chart-line",
                )
            )
        table = self.query_one("#totals", DataTable)
        table.add_columns("provider", "model", "replies", "in", "out", "cost")
        for row in overview.by_model:
            cost = "price unknown" if row["cost_usd"] is None else format_usd(row["cost_usd"])
            if row["cost_usd"] is not None and row["unpriced"]:
                cost += f" (+{row['unpriced']} unpriced)"
            table.add_row(
                Text(str(row["provider"] or "—")),
                Text(str(row["model"] or "—")),
                f"{row['requests']:,}",
                f"{row['input_tokens']:,}",
                f"{row['output_tokens']:,}",
                Text(cost),
            )


NARROWED = {"request": 22, "key": 14, "tokens": 16}


def _shorter(cell: str, today: str) -> str:
    """A cell as the screen shows it: a time of today without its date."""
    return cell.removeprefix(today) if cell.startswith(today) and len(cell) == 19 else cell


class RequestsScreen(_LedgerScreen):
    HEADING = "Requests"

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="requests"):
            yield Static(Text("Reading…"), id="requests-hint", classes="hint")
            yield DataTable(id="request-log", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def read(self) -> list[dict[str, Any]]:
        return self.data.spending.request_log(REQUESTS_SHOWN)

    def show(self, value: Any) -> None:
        rows: list[dict[str, Any]] = value
        shown = (
            "No request made yet."
            if not rows
            else f"The {len(rows):,} latest requests, newest first."
        )
        self.query_one("#requests-hint", Static).update(
            Text(
                f"{shown} Every request byok-tui made is here, with a key or without (the "
                "local runtime's); keys never are. `byok-tui requests` prints them whole."
            )
        )
        table = self.query_one("#request-log", DataTable)
        # Narrow enough for 120 columns: today's times without the date, and the request and
        # key cut to a width (the whole row: `byok-tui requests`).
        for heading in REQUEST_HEADINGS:
            table.add_column(heading, width=NARROWED.get(heading))
        # Text cells: host, path and model came from outside and are never parsed as markup.
        today = time.strftime("%Y-%m-%d ")
        table.add_rows(
            [tuple(Text(_shorter(cell, today)) for cell in request_cells(row)) for row in rows]
        )
        table.focus()
