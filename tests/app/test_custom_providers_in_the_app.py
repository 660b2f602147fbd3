"""Providers the user defines, in the app: added and removed in Settings, a row in the
sidebar, chosen like any provider, sent only their own key, and the key line saying where
the key goes when that is not the provider's own host."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Button, Input, OptionList, Select

from byok_tui.core.config import load_config
from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.providers.custom import CustomDefinition, add_definition, definitions
from byok_tui.widgets.config_pane import ConfigPane
from byok_tui.widgets.key_field import KeyField
from byok_tui.widgets.provider_form import ProviderForm
from byok_tui.widgets.provider_settings import ProviderSettings
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    answer_yes,
    choose,
    make_app,
    replies,
    send,
    settings_opened,
    settle,
    state,
    type_into,
    wait_for,
    workers_done,
)
from tests.support.provider_server import ProviderServer, Reply, openai_reply

OWN_KEY = "gateway-" + "G" * 40
OPENAI_KEY = "sk-proj-" + "O" * 50


def key_line(app: object) -> str:
    pane = app.screen.query_one(ConfigPane)  # type: ignore[attr-defined]
    return str(pane.query_one("#key-in-use").render())


async def submit(pilot: Pilot[None], form: ProviderForm, **fields: str) -> None:
    """Fill the form's fields and press Enter in the last one (keyboard first)."""
    for name, value in fields.items():
        field = form.query_one(f"#new-provider-{name}", Input)
        field.value = value
    field.focus()
    await pilot.press("enter")


def problem(form: ProviderForm) -> str:
    return str(form.query_one("#new-provider-problem").render())


async def test_a_provider_added_in_settings_is_written_shown_and_removable(
    server: ProviderServer,
) -> None:
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 60)) as pilot:
        await settings_opened(pilot)
        form = app.screen.query_one(ProviderForm)
        await submit(pilot, form, id="lan", url="http://192.168.1.5/v1")
        await wait_for(pilot, lambda: "Not added" in problem(form))
        assert "plain http to 192.168.1.5" in problem(form)
        assert not app_paths().config_file.exists()  # nothing written

        form.query_one("#new-provider-key", Select).value = "none"
        await submit(
            pilot,
            form,
            id="lmstudio",
            name="LM Studio",
            url=f"{server.base_url}/v1",
            models="qwen-7b, llama-8b",
        )
        await wait_for(pilot, lambda: bool(app.screen.query("#row-lmstudio")))
        (definition,) = definitions(load_config(app_paths().config_file))
        assert (definition.id, definition.name, definition.key) == ("lmstudio", "LM Studio", "none")
        assert [m for m, _ in definition.models] == ["qwen-7b", "llama-8b"]
        assert form.query_one("#new-provider-id", Input).value == ""  # cleared once added
        assert server.requests == []  # defining it asked it nothing

        await pilot.press("escape")
        await settle(pilot)
        await choose(pilot, "#providers", "provider:lmstudio")
        assert (state(app).bot.config.provider, state(app).bot.config.model) == (
            "lmstudio",
            "qwen-7b",
        )
        server.reply_with(openai_reply("from LM Studio"))
        await send(pilot, "hello")
        await wait_for(pilot, lambda: replies(app) == ["from LM Studio"])
        assert server.requests[0].header("authorization") is None

        await pilot.press("ctrl+s")
        await settle(pilot)
        row = app.screen.query_one("#row-lmstudio", ProviderSettings)
        row.query_one(".remove-provider", Button).press()
        await answer_yes(pilot)
        await wait_for(pilot, lambda: not app.screen.query("#row-lmstudio"))
        assert definitions(load_config(app_paths().config_file)) == ()

        # The bot on it is moved to a provider that exists, and told so: never a crash.
        await pilot.press("escape")
        await settle(pilot)
        assert state(app).bot.config.provider != "lmstudio"
        assert state(app).lost_provider == "lmstudio"
        said = [n.message for n in app._notifications]
        assert any("used the provider lmstudio, which is not defined any more" in s for s in said)
        rows = app.screen.query_one("#providers", OptionList)
        ids = [rows.get_option_at_index(i).id for i in range(rows.option_count)]
        assert "provider:openai" in ids and "provider:lmstudio" not in ids


async def test_the_key_line_says_where_the_key_goes_off_the_providers_own_host(
    server: ProviderServer,
) -> None:
    add_definition(
        app_paths().config_file,
        CustomDefinition("gateway", f"{server.base_url}/v1", "Gateway", (("m1", "m1"),)),
    )
    keys = open_key_store(app_paths())
    keys.set(entry_name("gateway"), OWN_KEY)
    keys.set(entry_name("openai"), OPENAI_KEY)
    host = server.base_url.removeprefix("http://")
    app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(pilot)
        await choose(pilot, "#providers", "provider:openai")
        await wait_for(pilot, lambda: f"→ {host}" in key_line(app))
        assert "global key" in key_line(app)
        await choose(pilot, "#providers", "provider:gateway")
        await wait_for(pilot, lambda: "gateway" in state(app).bot.config.provider)
        await wait_for(pilot, lambda: f"global key gate…GGGG → {host}" in key_line(app))
        server.reply_with(openai_reply("ok"))
        await send(pilot, "hi")
        await wait_for(pilot, lambda: replies(app) == ["ok"])
    assert [seen.header("authorization") for seen in server.requests] == [f"Bearer {OWN_KEY}"]


async def test_a_built_in_provider_on_its_own_host_has_no_arrow() -> None:
    open_key_store(app_paths()).set(entry_name("openai"), OPENAI_KEY)
    app = make_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: "global key" in key_line(app))
        assert "→" not in key_line(app)


async def test_a_key_typed_in_its_settings_row_is_saved_under_its_own_entry(
    server: ProviderServer,
) -> None:
    add_definition(
        app_paths().config_file,
        CustomDefinition("gateway", f"{server.base_url}/v1", "Gateway", (("m1", "m1"),)),
    )
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 60)) as pilot:
        await settings_opened(pilot)
        field = app.screen.query_one("#row-gateway KeyField", KeyField)
        await type_into(pilot, field, OWN_KEY)
        await pilot.press("escape")
        await settle(pilot)
    assert open_key_store(app_paths()).get(entry_name("gateway")) == OWN_KEY
    assert server.requests == []  # saving never asks the server


async def test_a_provider_removed_while_it_is_being_checked_is_no_error_when_it_answers(
    server: ProviderServer,
) -> None:
    """Check on a server of your own, then Remove provider before it answers: its row is
    gone when the answer comes, and that answer is dropped (the worker that asked looked
    for the row's status line, and its failure ended the app)."""
    add_definition(
        app_paths().config_file,
        CustomDefinition("lmstudio", f"{server.base_url}/v1", "LM Studio", key="none"),
    )
    models = b'{"object": "list", "data": [{"id": "qwen-7b", "object": "model"}]}'
    server.reply_with(Reply(headers={"content-type": "application/json"}, steps=[1.0, models]))
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 60)) as pilot:
        await settings_opened(pilot)
        row = app.screen.query_one("#row-lmstudio", ProviderSettings)
        row.query_one(".test-key", Button).press()
        await wait_for(pilot, lambda: len(server.requests) == 1)  # asked, not yet answered
        row.query_one(".remove-provider", Button).press()
        await answer_yes(pilot)
        await wait_for(pilot, lambda: not app.screen.query("#row-lmstudio"))
        await workers_done(app)  # the answer came, and Check's worker is over
        assert app.is_running and app._exception is None
        assert type(app.screen).__name__ == "SettingsScreen"
