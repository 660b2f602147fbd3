"""A provider defined anew (by an import, `provider add` or Settings) never inherits a key, a key
command, a label or a bot's own key that was set for an earlier provider of the same id: those
were meant for another address. An import that would define such an id does not; `provider
add` forgets them and says so, and the user sets keys for the new provider knowingly."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import run_cli
from tests.support.provider_server import ProviderServer, openai_reply

TRUSTED_URL = "https://api.together.example/v1"
COMMAND_KEY = "tg-command-" + "C" * 36
BOT_KEY = "tg-perbot-" + "B" * 36


def attackers_export(tmp_path: Path, server: ProviderServer) -> Path:
    """An export, made on another machine, that defines `together` at the server's address."""
    other = {
        "BYOK_TUI_HOME": str(tmp_path / "attacker-home"),
        "BYOK_TEST_KEYRING_FILE": str(tmp_path / "attacker-keyring.json"),
    }
    added = run_cli(
        "provider", "add", "together", "--base-url", f"{server.base_url}/v1", "--model", "m",
        env=other,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    exported = tmp_path / "export.json"
    assert run_cli("export", str(exported), env=other).returncode == 0
    return exported


def define_together() -> None:
    added = run_cli("provider", "add", "together", "--base-url", TRUSTED_URL, "--model", "m")
    assert added.returncode == 0, added.stderr


def sent_any(server: ProviderServer, *secrets: str) -> bool:
    return any(
        secret in seen.target + repr(seen.headers) + seen.body.decode()
        for seen in server.requests
        for secret in secrets
    )


def test_an_import_never_defines_a_provider_whose_key_command_is_kept_here(
    tmp_path: Path, server: ProviderServer
) -> None:
    define_together()
    saved = run_cli("keys", "set", "together", "--command", f"echo {COMMAND_KEY}")
    assert saved.returncode == 0, saved.stderr
    assert run_cli("provider", "rm", "together").returncode == 0
    server.reply_with(openai_reply("stolen"))
    imported = run_cli("import", str(attackers_export(tmp_path, server)))
    assert imported.returncode == 0, imported.stderr
    assert "not defined: together" in imported.stderr
    assert "a key command" in imported.stderr
    asked = run_cli("ask", "-p", "together", "hi")
    assert asked.returncode != 0
    assert server.requests == [], "a key command's key went to an address an import named"


def test_an_import_never_defines_a_provider_a_bot_keeps_its_own_key_for(
    tmp_path: Path, server: ProviderServer
) -> None:
    define_together()
    assert run_cli("bot", "add", "Team", "-p", "together", "-m", "m").returncode == 0
    assert run_cli("bot", "key", "Team", stdin=BOT_KEY).returncode == 0
    assert run_cli("provider", "rm", "together").returncode == 0
    server.reply_with(openai_reply("stolen"))
    imported = run_cli("import", str(attackers_export(tmp_path, server)))
    assert imported.returncode == 0, imported.stderr
    assert "not defined: together" in imported.stderr
    assert "Team's own key" in imported.stderr
    asked = run_cli("ask", "--bot", "Team", "hi")
    assert asked.returncode != 0
    assert not sent_any(server, BOT_KEY), "a bot's own key went to an address an import named"


def test_provider_add_forgets_every_key_kept_for_an_earlier_provider_of_its_id(
    server: ProviderServer,
) -> None:
    define_together()
    assert run_cli("keys", "set", "together", stdin="tg-default-" + "D" * 36).returncode == 0
    labelled = run_cli("keys", "set", "together", "--label", "work", "--command", "echo x")
    assert labelled.returncode == 0, labelled.stderr
    assert run_cli("bot", "add", "Team", "-p", "together", "-m", "m").returncode == 0
    assert run_cli("bot", "key", "Team", stdin=BOT_KEY).returncode == 0
    assert run_cli("provider", "rm", "together").returncode == 0
    again = run_cli(
        "provider", "add", "together", "--base-url", f"{server.base_url}/v1", "--model", "m"
    )
    assert again.returncode == 0, again.stderr
    assert "Forgot" in again.stdout
    assert "the stored key" in again.stdout and "work" in again.stdout
    assert "Team's own key" in again.stdout
    server.reply_with(openai_reply("hello"), openai_reply("hello"))
    assert run_cli("ask", "-p", "together", "hi").returncode == 3  # no key: set it again
    assert run_cli("ask", "--bot", "Team", "hi").returncode == 3
    assert server.requests == []
    assert "work" not in run_cli("keys", "list").stdout


async def test_a_provider_added_in_settings_inherits_no_key_kept_for_its_id(
    server: ProviderServer,
) -> None:
    from byok_tui.core.paths import app_paths
    from byok_tui.keys import entry_name, open_key_store
    from byok_tui.keys.index import read_index, save_key
    from byok_tui.widgets.provider_form import ProviderForm
    from tests.support.pilot import make_app, settle, wait_for

    store = open_key_store(app_paths())
    save_key(store, entry_name("lan"), "lan", "default", key="lan-old-" + "K" * 36)
    save_key(store, entry_name("lan", "work"), "lan", "work", command="echo x")
    app = make_app()
    async with app.run_test(size=(140, 60)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        form = app.screen.query_one(ProviderForm)
        form.query_one("#new-provider-id").value = "lan"  # type: ignore[attr-defined]
        url = form.query_one("#new-provider-url")
        url.value = f"{server.base_url}/v1"  # type: ignore[attr-defined]
        url.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(app.screen.query("#row-lan")))
    assert store.get(entry_name("lan")) is None
    assert read_index(store).labels_of("lan") == [] and read_index(store).command("lan") is None
