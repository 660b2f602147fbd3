"""The app opens with every provider and its key state, and quits with ctrl+q."""

from __future__ import annotations

from textual.widgets import OptionList

from byok_tui.app import ByokApp
from byok_tui.core.paths import app_paths
from byok_tui.core.registry import provider_ids
from byok_tui.keys import entry_name, open_key_store
from tests.support.cli import run_cli
from tests.support.keys import ENV_KEY, FAKE_KEYS
from tests.support.pilot import WIDTH_WITHOUT_CONFIG_PANE, make_app, replies, send, settle, wait_for
from tests.support.provider_server import openai_reply, provider_server


def provider_rows(app: ByokApp) -> dict[str, str]:
    option_list = app.screen.query_one("#providers", OptionList)
    rows = {}
    for index in range(option_list.option_count):
        option = option_list.get_option_at_index(index)
        rows[(option.id or "").removeprefix("provider:")] = str(option.prompt)
    return rows


async def test_the_sidebar_shows_every_provider_and_its_key_state() -> None:
    open_key_store(app_paths()).set(entry_name("anthropic"), FAKE_KEYS["anthropic"])
    app = make_app(GROQ_API_KEY=ENV_KEY)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        rows = provider_rows(app)
        assert list(rows) == list(provider_ids())
        assert "key set" in rows["anthropic"]
        assert "from GROQ_API_KEY" in rows["groq"]
        assert "no key" in rows["openai"]
        assert "not running" in rows["ollama"]
        for row in rows.values():
            assert FAKE_KEYS["anthropic"] not in row
            assert ENV_KEY not in row
        await pilot.press("ctrl+q")
    assert app.return_code == 0


async def test_a_key_set_in_another_terminal_is_used_by_the_next_message() -> None:
    open_key_store(app_paths()).set(entry_name("openai"), "sk-proj-" + "a" * 60)
    rotated = "sk-proj-" + "b" * 60
    with provider_server() as server:
        server.reply_with(openai_reply("ok"))
        app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
            await settle(pilot)
            assert run_cli("keys", "set", "openai", stdin=rotated).returncode == 0
            await send(pilot, "hi")
            await wait_for(pilot, lambda: replies(app) == ["ok"])
        assert server.requests[0].header("authorization") == f"Bearer {rotated}"


async def test_a_corrupt_key_file_still_starts_the_app_and_says_so() -> None:
    keys_file = app_paths().keys_file
    keys_file.parent.mkdir(parents=True)
    keys_file.write_text("not json")
    app = make_app(OPENAI_API_KEY=ENV_KEY)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        messages = [n.message for n in app._notifications]
        assert any(f"cannot read the key file {keys_file}" in m for m in messages)
        assert "from OPENAI_API_KEY" in provider_rows(app)["openai"]
    assert keys_file.read_text() == "not json"
