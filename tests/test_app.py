"""The app opens with every provider and its key state, and quits with ctrl+q."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from byok_tui.app import ByokApp, build_app
from byok_tui.keys import entry_name, open_key_store
from byok_tui.paths import app_paths
from byok_tui.providers.registry import provider_ids
from tests.support.cli import run_cli
from tests.support.keys import ENV_KEY, FAKE_KEYS


def table_rows(app: ByokApp) -> dict[str, list[str]]:
    table = app.screen.query_one("#providers", DataTable)
    return {
        str(row_key.value): [str(cell) for cell in table.get_row(row_key)] for row_key in table.rows
    }


async def test_the_app_shows_every_provider_and_its_key_state() -> None:
    open_key_store(app_paths()).set(entry_name("anthropic"), FAKE_KEYS["anthropic"])
    app = build_app(app_paths(), {"GROQ_API_KEY": ENV_KEY})
    async with app.run_test(size=(120, 30)) as pilot:
        rows = table_rows(app)
        assert list(rows) == list(provider_ids())
        key = FAKE_KEYS["anthropic"]
        assert rows["anthropic"] == [
            "Anthropic",
            "app-apikey-anthropic",
            "set",
            "global key",
            f"{key[:4]}…{key[-4:]}",
        ]
        assert rows["groq"][2:4] == ["unset", "environment (GROQ_API_KEY)"]
        assert rows["openai"][2:] == ["unset", "no key", "—"]
        assert rows["ollama"][1:4] == ["—", "local", "local runtime, no key"]
        await pilot.press("ctrl+q")
    assert app.return_code == 0


async def test_reload_picks_up_a_key_set_from_another_terminal() -> None:
    app = build_app(app_paths(), {})
    async with app.run_test() as pilot:
        assert table_rows(app)["openai"][3] == "no key"
        assert run_cli("keys", "set", "openai", stdin=FAKE_KEYS["openai"]).returncode == 0
        await pilot.press("r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert table_rows(app)["openai"][3] == "global key"


async def test_a_corrupt_key_file_still_starts_the_app_and_says_so() -> None:
    keys_file = app_paths().keys_file
    keys_file.parent.mkdir(parents=True)
    keys_file.write_text("not json")
    app = build_app(app_paths(), {"OPENAI_API_KEY": ENV_KEY})
    async with app.run_test(size=(120, 30)):
        status = app.screen.query_one("#store-status", Static)
        assert "Stored keys could not be read" in str(status.render())
        assert str(keys_file) in str(status.render())
        assert status.has_class("error")
        assert table_rows(app)["openai"][3] == "environment (OPENAI_API_KEY)"
    assert keys_file.read_text() == "not json"
