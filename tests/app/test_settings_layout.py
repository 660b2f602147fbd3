"""Settings > API Keys opens on the keys (the budgets follow the providers), says each key as
it is now right after a key is pasted over another, and the config pane's per-bot key field
is named in words that fit on one line."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Label, Static

from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.widgets.budget_editor import BudgetEditor
from byok_tui.widgets.key_field import KeyField
from byok_tui.widgets.provider_settings import ProviderSettings
from tests.support.pilot import WIDTH_WITHOUT_CONFIG_PANE, make_app, settle, wait_for

OLD_KEY = "sk-proj-" + "O" * 50 + "AAAA"
NEW_KEY = "sk-proj-" + "N" * 50 + "ZZZZ"


async def test_settings_opens_on_the_keys_with_the_budgets_after_the_providers() -> None:
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        rows = list(app.screen.query(ProviderSettings))
        budgets = app.screen.query_one(BudgetEditor)
        assert budgets.region.y > rows[-1].region.y, "the budgets come before the keys"
        first = rows[0].region
        assert 0 < first.y < 40 and first.height > 0, "the first provider's key is not in view"


async def test_a_key_pasted_over_another_in_settings_is_the_one_its_line_names() -> None:
    open_key_store(app_paths()).set(entry_name("openai"), OLD_KEY)
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 50)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        line = app.screen.query_one("#row-openai .keys", Static)
        await wait_for(pilot, lambda: "AAAA" in str(line.render()))
        field = app.screen.query_one("#row-openai KeyField", KeyField)
        field.query_one(Input).value = NEW_KEY  # pasted over the old one
        await wait_for(pilot, lambda: "ZZZZ" in str(line.render()))
        assert "AAAA" not in str(line.render())


async def test_the_per_bot_key_field_is_named_on_one_line_at_120_columns() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await wait_for(
            pilot, lambda: any("Per-Bot" in str(lbl.render()) for lbl in app.screen.query(Label))
        )
        label = next(
            lbl for lbl in app.screen.query(Label) if "Per-Bot API Key" in str(lbl.render())
        )
        assert label.region.height == 1, str(label.render())
        assert str(label.render()).strip().endswith(")")


async def test_at_80_columns_the_budget_buttons_are_on_screen() -> None:
    from textual.widgets import Button

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        app.screen.query_one("#budgets").scroll_visible(animate=False)
        await settle(pilot)
        for button_id in ("#set-budget", "#remove-budget"):
            region = app.screen.query_one(button_id, Button).region
            assert region.width > 0 and region.right <= 80, (button_id, region)


async def test_the_add_provider_fields_are_bordered_like_every_other_field() -> None:
    from byok_tui.widgets.provider_form import ProviderForm

    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        form = app.screen.query_one(ProviderForm)
        fields = list(form.query(Input))
        assert len(fields) == 4
        for field in fields:
            assert field.styles.border_top[0] not in ("", "none"), field.id


async def test_settings_whose_keys_cannot_be_read_still_shows_its_rows_and_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The rows are mounted once the keys are read: a read that fails (a key store that
    cannot be opened) still shows them, empty, and says what went wrong."""
    from byok_tui.app_services.key_data import KeyData
    from byok_tui.core.errors import ByokError

    def unreadable(self: KeyData, providers: object) -> dict[str, str]:
        raise ByokError("The key store could not be read", remedy="Check its file.")

    monkeypatch.setattr(KeyData, "stored_keys", unreadable)
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        await wait_for(pilot, lambda: bool(app.screen.query(ProviderSettings)))
        said = [str(n.message) for n in app._notifications]
        assert any("The key store could not be read" in s for s in said), said
        assert app.screen.query_one("#row-openai").query_one(KeyField).value == ""
