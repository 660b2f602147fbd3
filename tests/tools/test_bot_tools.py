"""Which tools a bot may use: none by default, chosen from the shell (`bot tools`), kept beside
the bot's configuration so that saving the config pane never drops them, and never carried by
a share link or an export (a server of the same name elsewhere could do anything)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from byok_tui.cli import main
from byok_tui.core.paths import app_paths
from byok_tui.core.records import BotConfig
from byok_tui.storage.store import Store
from byok_tui.storage.transfer import export_all
from tests.support.cli import run_cli
from tests.support.mcp_tools import LIGHT_SERVER

SERVER = LIGHT_SERVER  # the SDK's own server: tests/tools/test_mcp_servers.py


def store() -> Store:
    return Store(app_paths().data_dir / "byok-tui.sqlite3")


def add_servers() -> None:
    for name in ("files", "search"):
        assert run_cli("mcp", "add", name, "--", *SERVER).returncode == 0


def test_a_bot_may_use_no_tool_until_it_is_given_some_and_clear_takes_them_back() -> None:
    add_servers()
    assert "Default may use: no tool" in run_cli("bot", "tools", "Default").stdout
    given = run_cli("bot", "tools", "Default", "files", "search:weather")
    assert given.returncode == 0, given.stderr
    assert "Default may use: files, search:weather" in given.stdout
    assert "files, search:weather" in run_cli("bot", "tools", "Default").stdout
    cleared = run_cli("bot", "tools", "Default", "--clear")
    assert "Default may use: no tool" in cleared.stdout
    opened = store()
    assert opened.bot_tools(opened.bot("Default").id) == ()


@pytest.mark.parametrize(
    ("entry", "said"), [("nowhere", "no MCP server named 'nowhere'"), ("files:", "names no tool")]
)
def test_a_server_not_configured_is_refused_and_nothing_changes(entry: str, said: str) -> None:
    add_servers()
    run_cli("bot", "tools", "Default", "files")
    refused = run_cli("bot", "tools", "Default", entry)
    assert refused.returncode == 2 and said in refused.stderr
    assert "Default may use: files" in run_cli("bot", "tools", "Default").stdout


def test_saving_the_bot_s_configuration_keeps_its_tools() -> None:
    add_servers()
    run_cli("bot", "tools", "Default", "files")
    opened = store()
    bot = opened.bot("Default")
    opened.update_bot(bot.id, BotConfig("Default", bot.config.provider, bot.config.model, "Hi"))
    assert opened.bot_tools(bot.id) == ("files",)


def test_neither_a_share_link_nor_an_export_carries_a_bot_s_tools() -> None:
    add_servers()
    run_cli("bot", "tools", "Default", "files", "search:weather")
    link = run_cli("bot", "share", "Default").stdout
    assert "files" not in link and "weather" not in link
    exported = json.loads(export_all(store(), [], {}))
    assert "tools" not in json.dumps(exported["bots"])


def test_a_model_that_takes_no_tools_is_said_where_they_are_chosen(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from byok_tui.core import registry

    add_servers()
    main(["bot", "list"])  # the default bot is made
    real = registry.get_provider

    def no_tools(provider_id: str) -> registry.Provider:
        provider = real(provider_id)
        models = tuple(m._replace(takes_tools=False) for m in provider.models)
        return provider._replace(models=models)

    monkeypatch.setattr(registry, "get_provider", no_tools)
    capsys.readouterr()
    assert main(["bot", "tools", "Default", "files"]) == 0
    said = capsys.readouterr().out
    assert "takes no tools, so none is offered to it" in said


def test_the_database_upgrade_gives_every_bot_no_tool(tmp_path: Path) -> None:
    opened = store()
    bot = opened.default_bot("groq", "llama-3.3-70b-versatile")
    assert opened.bot_tools(bot.id) == ()
