"""Settings sets and removes budgets (the same ledger `byok-tui budget` writes), and shows the
rate limits each provider last stated, with their age."""

from __future__ import annotations

from textual.widgets import Input, Select

from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.records import Budget
from tests.support.pilot import WIDTH_WITHOUT_CONFIG_PANE, make_app, settle, wait_for

RATE_HEADERS = (
    ("x-ratelimit-limit-requests", "60"),
    ("x-ratelimit-remaining-requests", "41"),
    ("x-ratelimit-reset-requests", "19s"),
)


def text_of(app: object, selector: str) -> str:
    return str(app.screen.query_one(selector).render())  # type: ignore[attr-defined]


async def test_a_budget_is_set_and_removed_in_settings_and_a_bad_amount_is_refused() -> None:
    ledger = open_store(open_services()).ledger
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 60)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        await wait_for(pilot, lambda: "No budgets" in text_of(app, "#budget-list"))
        app.screen.query_one("#budgets").scroll_visible(animate=False)  # after the keys
        await settle(pilot)

        app.screen.query_one("#budget-scope", Select).value = "openai"
        app.screen.query_one("#budget-per", Select).value = "day"
        amount = app.screen.query_one("#budget-amount", Input)
        amount.value = "five dollars"
        await pilot.click("#set-budget")
        await wait_for(pilot, lambda: "not an amount" in text_of(app, "#budget-problem"))
        assert ledger.budgets() == []

        amount.value = "$0.25"
        amount.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: "of $0.250 today for openai" in text_of(app, "#budget-list"))
        assert ledger.budgets() == [Budget("openai", 0.25, "day")]
        assert "Budget: $0.00 of $0.250 today for openai" in text_of(app, "#row-openai .spend")

        await pilot.click("#remove-budget")
        await wait_for(pilot, lambda: "No budgets" in text_of(app, "#budget-list"))
        assert ledger.budgets() == []


async def test_settings_shows_the_rate_limits_last_stated_with_their_age() -> None:
    open_store(open_services()).ledger.save_rate_limits("openai", "global", RATE_HEADERS)
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 60)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        await wait_for(pilot, lambda: "Rate limits" in text_of(app, "#row-openai .limits"))
        said = text_of(app, "#row-openai .limits")
        assert said.startswith("Rate limits: global: 41/60 requests (reset 19s) (as of ")
        assert "s ago)" in said
        assert not app.screen.query_one("#row-anthropic .limits").has_class("shown")
