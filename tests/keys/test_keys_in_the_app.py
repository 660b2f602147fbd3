"""Key commands, failover and key health in the app: Settings and the config pane save the
command (never the key), the failover switch, and show each key's health."""

from __future__ import annotations

import shlex
import sys

from textual.widgets import Checkbox, Input, Static

from byok_tui.core.paths import app_paths
from byok_tui.keys import open_key_store
from byok_tui.keys.index import read_index
from tests.support.cli import run_cli
from tests.support.pilot import choose, make_app, replies, send, settle, state, wait_for
from tests.support.provider_server import ProviderServer, openai_reply

KEY = "sk-proj-CMD" + "7" * 50 + "Zx"


def printing(key: str) -> str:
    return shlex.join([sys.executable, "-c", f"print({key!r})"])


async def test_settings_saves_a_key_command_and_the_failover_switch(
    server: ProviderServer,
) -> None:
    """A command typed in Settings (Enter) is stored, never the key; the next message sends
    the key it prints, and the reply's line says `from command`."""
    server.reply_with(openai_reply("Hello from the command's key"))
    app = make_app(BYOK_TUI_OPENAI_BASE_URL=server.base_url)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        field = app.screen.query_one("#row-openai .key-command", Input)
        field.focus()
        field.value = printing(KEY)
        await pilot.press("enter")
        switch = app.screen.query_one("#row-openai .failover", Checkbox)
        switch.focus()
        await pilot.press("space")
        await settle(pilot)
        await wait_for(
            pilot,
            lambda: "command:" in str(app.screen.query_one("#row-openai .keys", Static).render()),
        )
        await pilot.press("escape")
        await settle(pilot)
        await choose(pilot, "#providers", "provider:openai")
        await wait_for(pilot, lambda: "from command" in state(app).key_in_use.line)
        await send(pilot, "Hi")
        await wait_for(pilot, lambda: replies(app) == ["Hello from the command's key"])
    index = read_index(open_key_store(app_paths()))
    assert index.command("openai") == printing(KEY)
    assert index.failover_on("openai")
    assert open_key_store(app_paths()).get("app-apikey-openai") is None
    assert server.requests[0].header("authorization") == f"Bearer {KEY}"
    logged = run_cli("requests").stdout
    assert "global from command python" in logged


async def test_the_config_pane_gives_a_bot_a_labelled_key() -> None:
    """`or the provider's key labelled`: Enter saves it; the key line names it."""
    run_cli("keys", "set", "openai", "--label", "work", stdin=KEY)
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await choose(pilot, "#providers", "provider:openai")
        await pilot.press("ctrl+o")
        await settle(pilot)
        field = app.screen.query_one("#bot-key-label", Input)
        field.focus()
        field.value = "work"
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: "work key" in str(app.screen.query_one("#key-in-use", Static).render()),
        )


async def test_the_key_line_names_the_key_failover_keeps_the_conversation_on() -> None:
    """With failover on, a conversation stays on the key that last answered it: the pane's
    line says that key, not the default one."""
    from byok_tui.app_services.services import open_services, open_store

    assert run_cli("keys", "set", "openai", stdin="sk-proj-" + "D" * 56).returncode == 0
    personal = "sk-proj-" + "P" * 52 + "Prsn"
    labelled = run_cli("keys", "set", "openai", "--label", "personal", stdin=personal)
    assert labelled.returncode == 0
    assert run_cli("keys", "failover", "openai", "on").returncode == 0
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, "pinned")
    store.add_message(conversation.id, "user", "hi")
    store.add_message(
        conversation.id, "assistant", "hello", provider="openai", key_source="key personal"
    )
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await wait_for(
            pilot,
            lambda: (
                "personal key sk-p…Prsn"
                in str(app.screen.query_one("#key-in-use", Static).render())
            ),
        )
