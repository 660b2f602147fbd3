"""The config pane's model list never crashes and never stores what is no model: a provider
of the user's own that lists no model is chosen (the sidebar or the Provider list) and offers
"Type a model id…"; the app starts again the same way; the list's blank entry keeps the
model the bot has, never the text `Select.NULL`."""

from __future__ import annotations

from textual.widgets import Select

from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.paths import app_paths
from byok_tui.providers.custom import CustomDefinition, add_definition
from byok_tui.widgets.config_pane import TYPE_A_MODEL_ID
from tests.support.pilot import chat, choose, make_app, settle, state, wait_for


def model_select(app) -> Select:  # type: ignore[no-untyped-def, type-arg]
    return chat(app).query_one("#bot-model", Select)


async def test_a_provider_with_no_model_listed_is_chosen_and_the_app_starts_again() -> None:
    add_definition(
        app_paths().config_file,
        CustomDefinition("lmstudio", "http://127.0.0.1:9/lmstudio", key="none"),
    )
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await choose(pilot, "#providers", "provider:lmstudio")
        await wait_for(pilot, lambda: state(app).bot.config.provider == "lmstudio")
        options = [value for _label, value in model_select(app)._options]
        assert TYPE_A_MODEL_ID in options
        assert app.is_running
    again = make_app()
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert again.is_running and state(again).bot.config.provider == "lmstudio"
        assert model_select(again).value == Select.NULL  # no model yet: nothing chosen


async def test_the_model_lists_blank_entry_keeps_the_bots_model() -> None:
    store = open_store(open_services())
    store.default_bot("openai", "gpt-5.5")
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        model_select(app).value = Select.NULL  # "choose a model", the blank entry
        await settle(pilot)
        assert state(app).bot.config.model == "gpt-5.5"
        app.context.writer.wait_idle()
    assert store.bot("Default").config.model == "gpt-5.5"
