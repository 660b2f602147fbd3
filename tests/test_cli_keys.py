"""`byok-tui keys …` run as a real subprocess, as a user or a script would run it."""

from __future__ import annotations

import json

from byok_tui.core.paths import app_paths
from byok_tui.core.registry import provider_ids
from tests.support.cli import run_cli
from tests.support.keys import ENV_KEY, FAKE_KEYS
from tests.support.terminal import InTerminal

OPENAI = FAKE_KEYS["openai"]


def test_set_reads_one_line_from_standard_input_and_get_prints_the_key_alone() -> None:
    result = run_cli("keys", "set", "openai", stdin=f"  {OPENAI}  \nignored second line\n")
    assert result.returncode == 0, result.stderr
    assert OPENAI not in result.stdout  # confirmation shows a masked key only
    assert f"{OPENAI[:4]}…{OPENAI[-4:]}" in result.stdout
    got = run_cli("keys", "get", "openai")
    assert (got.returncode, got.stdout) == (0, OPENAI + "\n")


def test_rm_unsets_the_entry() -> None:
    run_cli("keys", "set", "groq", stdin=FAKE_KEYS["groq"])
    removed = run_cli("keys", "rm", "groq")
    assert removed.returncode == 0
    assert "Removed app-apikey-groq" in removed.stdout
    missing = run_cli("keys", "get", "groq")
    assert missing.returncode == 1
    assert "no key is stored in app-apikey-groq" in missing.stderr
    again = run_cli("keys", "rm", "groq")
    assert again.returncode == 0
    assert "was not set" in again.stdout


def test_list_shows_every_provider_with_entry_state_source_and_a_masked_key() -> None:
    run_cli("keys", "set", "anthropic", stdin=FAKE_KEYS["anthropic"])
    result = run_cli("keys", "list", env={"OPENAI_API_KEY": ENV_KEY})
    assert result.returncode == 0, result.stderr
    lines = {line.split()[0]: line for line in result.stdout.splitlines() if line.strip()}
    for provider_id in provider_ids():
        assert provider_id in lines
    assert "app-apikey-anthropic" in lines["anthropic"]
    assert "set" in lines["anthropic"]
    assert "global key" in lines["anthropic"]
    assert "environment (OPENAI_API_KEY)" in lines["openai"]
    assert "unset" in lines["openai"]
    assert "no key" in lines["xai"]
    assert "local runtime, no key" in lines["ollama"]
    for secret in (FAKE_KEYS["anthropic"], ENV_KEY):
        assert secret not in result.stdout
        assert f"{secret[:4]}…{secret[-4:]}" in result.stdout


def test_path_prints_where_keys_are_kept() -> None:
    result = run_cli("keys", "path")
    assert result.stdout.strip() == str(app_paths().keys_file)
    forced = run_cli("keys", "path", env={"BYOK_TUI_KEYSTORE": "keyring"})
    assert "keyring service 'byok-tui'" in forced.stdout


def test_an_unknown_provider_is_exit_2_and_lists_the_valid_ids() -> None:
    for action in ("set", "get", "rm"):
        result = run_cli("keys", action, "chatgpt", stdin="x")
        assert result.returncode == 2
        assert "unknown provider 'chatgpt'" in result.stderr
        assert ", ".join(provider_ids()) in result.stderr


def test_the_local_runtime_has_no_key_to_set() -> None:
    result = run_cli("keys", "set", "ollama", stdin="anything")
    assert result.returncode == 2
    assert "local runtime and needs no key" in result.stderr


def test_a_key_is_never_accepted_as_an_argument() -> None:
    result = run_cli("keys", "set", "openai", OPENAI)
    assert result.returncode == 2
    assert not app_paths().keys_file.exists()


def test_empty_input_changes_nothing() -> None:
    run_cli("keys", "set", "openai", stdin=OPENAI)
    result = run_cli("keys", "set", "openai", stdin="   \n")
    assert result.returncode == 2
    assert "no key was given; nothing was changed" in result.stderr
    assert json.loads(app_paths().keys_file.read_text()) == {"app-apikey-openai": OPENAI}


def test_a_key_shaped_for_another_provider_is_saved_with_a_warning() -> None:
    result = run_cli("keys", "set", "openai", stdin=FAKE_KEYS["groq"])
    assert result.returncode == 0
    assert "looks like a Groq key, but the provider is OpenAI. Saved anyway." in result.stderr


def test_a_corrupt_key_file_makes_list_fail_clearly_but_still_list_providers() -> None:
    keys_file = app_paths().keys_file
    keys_file.parent.mkdir(parents=True)
    keys_file.write_text("{broken")
    result = run_cli("keys", "list")
    assert result.returncode == 1
    assert f"cannot read the key file {keys_file}" in result.stderr
    assert "anthropic" in result.stdout
    assert keys_file.read_text() == "{broken"


def test_set_on_a_terminal_asks_with_hidden_input() -> None:
    with InTerminal("keys", "set", "openai") as terminal:
        terminal.read_until(b"input hidden")
        assert b"API key for OpenAI (input hidden)" in terminal.seen
        terminal.type(OPENAI.encode() + b"\n")
        terminal.read_until(b"Saved")
        terminal.proc.wait(timeout=30)
    assert terminal.proc.returncode == 0
    assert OPENAI.encode() not in terminal.seen  # the terminal never echoed it
    assert json.loads(app_paths().keys_file.read_text()) == {"app-apikey-openai": OPENAI}


def test_help_and_version_answer() -> None:
    help_text = run_cli("--help").stdout
    for expected in ("keys", "BYOK_TUI_HOME", "BYOK_TUI_KEYSTORE", "--log", "exit status"):
        assert expected in help_text
    assert "kept until it is sent" in help_text  # what happens to a message being written
    assert "From a script or a pipe: `byok-tui ask`" in help_text
    assert run_cli("--version").stdout.startswith("byok-tui ")
    keys_help = run_cli("keys", "--help").stdout
    for action in ("set", "get", "rm", "list", "path"):
        assert action in keys_help


def test_help_lists_every_app_key_in_one_aligned_column() -> None:
    from byok_tui.core.bindings import APP_KEYS, CHAT_KEYS, COMPOSER_KEYS

    lines = run_cli("--help").stdout.split("keys in the app:\n", 1)[1].splitlines()
    rows = [line for line in lines if line.startswith("  ") and not line.startswith("   ")]
    assert len(rows) >= len(APP_KEYS) + len(CHAT_KEYS) + len(COMPOSER_KEYS)
    columns = {len(row) - len(row[2:].split("  ", 1)[1].lstrip()) for row in rows}
    assert len(columns) == 1, "\n".join(rows)  # every description starts in one column
    assert any("ctrl+j or shift+enter or alt+enter" in row for row in rows)
