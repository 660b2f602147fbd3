"""The Usage screen (spend per day for 30 days per provider as a chart, totals per model) and
the Requests screen (the request log): reached by a key and the palette, reading only."""

from __future__ import annotations

import time

from rich.text import Text
from textual.widgets import DataTable, Sparkline, Static

from byok_tui.app_services.services import open_services, open_store
from byok_tui.screens.spend import RequestsScreen, UsageScreen
from tests.support.keys import FAKE_KEYS
from tests.support.pilot import WIDTH_WITHOUT_CONFIG_PANE, make_app, settle, wait_for
from tests.support.spend import a_chat_request, some_spend


async def test_the_usage_screen_charts_each_providers_spend_per_day_and_totals_per_model() -> None:
    some_spend()
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 44)) as pilot:
        await settle(pilot)
        await pilot.press("f8")
        await wait_for(pilot, lambda: isinstance(app.screen, UsageScreen))
        await wait_for(pilot, lambda: len(app.screen.query(Sparkline)) == 2)
        labels = [str(s.render()) for s in app.screen.query(".chart-label").results(Static)]
        assert labels == [
            "OpenAI: $0.750 (+1 unpriced) · 3 replies · peak $0.500",
            "Anthropic: $0.125 · 1 reply · peak $0.125",
        ]
        openai, anthropic = app.screen.query(Sparkline)
        assert openai.data is not None and anthropic.data is not None
        assert len(openai.data) == 30 and openai.data[-1] == 0.25 and openai.data[-3] == 0.5
        assert anthropic.data[0] == 0.125
        table = app.screen.query_one("#totals", DataTable)
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert rows == [
            ["anthropic", "claude-haiku-5-5", "1", "100", "50", "$0.125"],
            ["openai", "gpt-5.5", "3", "300", "150", "$0.750 (+1 unpriced)"],
        ]
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, UsageScreen))


async def test_at_80_columns_the_usage_chart_still_has_a_column_per_day() -> None:
    """The hint says 'a column per day': at 80 columns the chart had 20 (30 days bucketed)."""
    some_spend()
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f8")
        await wait_for(pilot, lambda: isinstance(app.screen, UsageScreen))
        await wait_for(pilot, lambda: len(app.screen.query(Sparkline)) == 2)
        await settle(pilot)
        for chart in app.screen.query(Sparkline):
            assert chart.region.width == 30, chart.region
        assert "A column per day" in str(app.screen.query_one("#days-hint", Static).render())


async def test_the_requests_screen_lists_the_log_newest_first_without_any_key() -> None:
    ledger = open_store(open_services()).ledger
    base = a_chat_request(key_last4=FAKE_KEYS["openai"][-4:])
    ledger.record_request(base, 0.0031)
    hostile = a_chat_request(
        started=time.time() - 60,  # before the probe at start-up, whatever the time of day
        provider="openrouter",
        purpose="models",
        method="GET",
        host="[bold red]gateway",
        path=f"/v1/models/{FAKE_KEYS['openai']}",
        key_source="environment",
        key_last4=None,
        model=None,
        status=None,
        outcome="network",
        duration_s=0.0,
        usage=None,
    )
    ledger.record_request(hostile, None)
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f9")
        await wait_for(pilot, lambda: isinstance(app.screen, RequestsScreen))
        table = app.screen.query_one("#request-log", DataTable)
        # The local runtime probed at start-up is in the log too (it needs no key).
        await wait_for(pilot, lambda: table.row_count == 3)
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(3)]
        assert rows[0][1:3] == ["ollama", "probe"]
        newest, older = rows[1:]
        assert newest[1:] == [
            "openrouter",
            "models",
            "GET [bold red]gateway/v1/models/[REDACTED]",
            "environment",
            "— network",
            "0.00 s",
            "—",
            "—",
        ]
        assert older[1:] == [
            "openai",
            "chat",
            "POST api.openai.com/v1/chat/completions",
            f"global …{FAKE_KEYS['openai'][-4:]}",
            "200",
            "1.50 s",
            "1,204 in · 388 out",
            "$0.0031",
        ]
        assert all(isinstance(cell, Text) for cell in table.get_row_at(1))
        assert FAKE_KEYS["openai"] not in " ".join(newest + older)
        assert "Every request byok-tui made is here, with a key or without" in str(
            app.screen.query_one("#requests-hint").render()
        )


async def test_at_120_columns_the_request_log_fits_without_scrolling_sideways() -> None:
    """At 120 columns the tokens and cost were off-screen, behind horizontal scrolling."""
    ledger = open_store(open_services()).ledger
    ledger.record_request(a_chat_request(started=time.time()), 0.0031)
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f9")
        await wait_for(pilot, lambda: isinstance(app.screen, RequestsScreen))
        table = app.screen.query_one("#request-log", DataTable)
        await wait_for(pilot, lambda: table.row_count >= 2)
        await settle(pilot)
        assert table.virtual_size.width <= table.size.width, (table.virtual_size, table.size)


async def test_usage_and_requests_are_in_the_command_palette() -> None:
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert {"Usage", "Requests"} <= set(titles)
