"""The sidebar's key state follows the keys: a key pasted in the config pane, or set from
another terminal and answered with, shows on its provider's row without a restart."""

from __future__ import annotations

from textual.widgets import OptionList

from byok_tui.app_services.services import open_services, open_store
from byok_tui.widgets.key_field import KeyField
from tests.support.cli import run_cli
from tests.support.keys import FAKE_KEYS
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    chat,
    make_app,
    replies,
    send,
    settle,
    wait_for,
)
from tests.support.provider_server import ProviderServer, openai_reply


def provider_row(app, provider_id: str) -> str:  # type: ignore[no-untyped-def]
    rows = chat(app).query_one("#providers", OptionList)
    return str(rows.get_option(f"provider:{provider_id}").prompt)


async def test_a_key_pasted_in_the_config_pane_shows_on_the_sidebar_row() -> None:
    store = open_store(open_services())
    store.default_bot("openai", "gpt-5.5")
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert "no key" in provider_row(app, "openai")
        await wait_for(pilot, lambda: bool(chat(app).query("#global-key")))
        field = chat(app).query_one("#global-key", KeyField)
        from textual.widgets import Input

        field.query_one(Input).value = FAKE_KEYS["openai"]
        await wait_for(pilot, lambda: "no key" not in provider_row(app, "openai"))


async def test_a_key_set_in_another_terminal_shows_once_a_reply_came_with_it(
    server: ProviderServer,
) -> None:
    store = open_store(open_services())
    store.default_bot("openai", "gpt-5.5")
    server.reply_with(openai_reply("hi"))
    app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        assert "no key" in provider_row(app, "openai")
        assert run_cli("keys", "set", "openai", stdin=FAKE_KEYS["openai"]).returncode == 0
        await send(pilot, "hello")
        await wait_for(pilot, lambda: replies(app) == ["hi"])
        await wait_for(pilot, lambda: "no key" not in provider_row(app, "openai"))


async def test_a_wait_in_the_sidebar_counts_down_and_clears_itself() -> None:
    import time

    from byok_tui.core.paths import app_paths
    from byok_tui.keys import entry_name, open_key_store

    open_key_store(app_paths()).set(entry_name("openai"), FAKE_KEYS["openai"])
    store = open_store(open_services())
    store.default_bot("openai", "gpt-5.5")
    store.ledger.save_rate_limits("openai", "global", (("retry-after", "3"),))
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: "wait" in provider_row(app, "openai"))
        first = provider_row(app, "openai")
        started = time.monotonic()
        await wait_for(pilot, lambda: provider_row(app, "openai") != first, timeout=3)
        assert "wait" in provider_row(app, "openai") or time.monotonic() - started > 1
        await wait_for(pilot, lambda: "wait" not in provider_row(app, "openai"), timeout=6)


async def test_several_unusable_keys_are_one_short_note_on_the_row() -> None:
    import time

    from byok_tui.core.paths import app_paths
    from byok_tui.keys import entry_name, open_key_store

    open_key_store(app_paths()).set(entry_name("openai"), FAKE_KEYS["openai"])
    store = open_store(open_services())
    store.default_bot("openai", "gpt-5.5")
    with store.transaction() as db:
        for name in ("default", "work"):
            db.execute(
                "INSERT INTO key_health (provider, fingerprint, name, state, until, checked,"
                " last_used) VALUES ('openai', ?, ?, 'invalid', NULL, ?, ?)",
                (f"fp-{name}", name, time.time(), time.time()),
            )
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        row = provider_row(app, "openai")
        assert "2 keys unusable" in row and "work key" not in row, row


async def test_a_provider_added_in_settings_is_in_the_sidebar_on_the_way_back() -> None:
    from textual.widgets import Input

    from byok_tui.widgets.provider_form import ProviderForm

    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 50)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        form = app.screen.query_one(ProviderForm)
        form.query_one("#new-provider-id", Input).value = "vllm"
        form.query_one("#new-provider-name", Input).value = "My vLLM"
        url = form.query_one("#new-provider-url", Input)
        url.value = "http://127.0.0.1:9/v1"
        url.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(app.screen.query("#row-vllm")))
        await pilot.press("escape")
        await settle(pilot)
        rows = chat(app).query_one("#providers", OptionList)
        ids = [rows.get_option_at_index(i).id for i in range(rows.option_count)]
        assert "provider:vllm" in ids


async def test_coming_back_to_the_app_shows_what_another_terminal_changed() -> None:
    """A provider added and a budget set from the shell while the app ran: shown once the
    terminal gives the app its focus back (read from disk, no request)."""
    from textual.events import AppFocus

    from byok_tui.widgets.config_pane import ConfigPane

    store = open_store(open_services())
    store.default_bot("openai", "gpt-5.5")
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        added = run_cli(
            "provider", "add", "vllm", "--base-url", "http://127.0.0.1:9/v1", "--no-key"
        )
        assert added.returncode == 0, added.stderr
        assert run_cli("budget", "set", "openai", "5", "--per", "month").returncode == 0
        app.post_message(AppFocus())
        rows = chat(app).query_one("#providers", OptionList)
        await wait_for(
            pilot,
            lambda: (
                "provider:vllm"
                in [rows.get_option_at_index(i).id for i in range(rows.option_count)]
            ),
        )
        pane = chat(app).query_one(ConfigPane)
        await wait_for(pilot, lambda: "Budget" in str(pane.query_one("#spend").render()))
