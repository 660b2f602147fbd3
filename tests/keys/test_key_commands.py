"""A key from a command (a password manager): the command is stored, never the key; it runs
without a shell, with no provider key in its environment and a time limit; its first line is
the key, held in memory only; a failure sends nothing and says which program failed and why."""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path

import pytest

from byok_tui.core.paths import app_paths
from byok_tui.core.redaction import remember_secret
from byok_tui.keys.command import KeyCommandError, KeyCommands, command_argv, program_of
from tests.support.cli import run_cli
from tests.support.provider_server import ProviderServer, openai_reply

KEY = "gsk_" + "P" * 48 + "mN3q"
OTHER_KEY = "sk-proj-" + "E" * 40 + "zz9K"


def printing(*lines: str, exit_code: int = 0, stderr: str = "", sleep: float = 0) -> str:
    """A command that prints `lines` (and `stderr`), sleeps, then exits with `exit_code`."""
    code = (
        f"import sys, time; time.sleep({sleep}); print({chr(10).join(lines)!r}); "
        f"sys.stderr.write({stderr!r}); sys.exit({exit_code})"
    )
    return shlex.join([sys.executable, "-c", code])


def groq_env(server: ProviderServer) -> dict[str, str]:
    return {"BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1"}


def test_the_first_line_the_command_prints_trimmed_is_the_key() -> None:
    commands = KeyCommands({})
    assert commands.run(printing(f"  {KEY}  ", "second line"), "the Groq key") == KEY


def test_op_references_are_shorthand_for_op_read_and_commands_split_like_a_shell() -> None:
    assert command_argv("op://Private/OpenAI/credential") == [
        "op",
        "read",
        "op://Private/OpenAI/credential",
    ]
    assert command_argv("pass show 'api keys/openai'") == ["pass", "show", "api keys/openai"]
    assert program_of("/usr/bin/rbw get openai") == "rbw"


def test_the_command_runs_without_a_shell_and_without_any_provider_key(tmp_path: Path) -> None:
    marker = tmp_path / "shell-ran"
    # Shell syntax is passed as arguments, never interpreted: no file is created.
    with pytest.raises(KeyCommandError):
        KeyCommands({}).run(f"true; touch {marker}", "the Groq key")
    assert not marker.exists()
    code = "import os; print('x y' if os.environ.get('GROQ_API_KEY') else 'clean-env-key-0123')"
    from byok_tui.core.child_env import child_environment

    environ = child_environment({"GROQ_API_KEY": KEY, "PATH": "/usr/bin:/bin", "LEAK": OTHER_KEY})
    remember_secret(OTHER_KEY)
    commands = KeyCommands(environ)
    assert "LEAK" not in environ and "GROQ_API_KEY" not in environ
    command = shlex.join([sys.executable, "-c", code])
    assert commands.run(command, "the Groq key") == "clean-env-key-0123"


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("no-such-program-for-keys --flag", "no-such-program-for-keys was not found"),
        (
            printing("", exit_code=2, stderr="gpg: decryption failed\nmore"),
            "exited with status 2: gpg: decryption failed",
        ),
        (printing(""), "printed nothing"),
        (printing("two words"), "character 4 is a space"),
    ],
)
def test_a_failing_command_is_a_clear_no_key_error(command: str, words: str) -> None:
    with pytest.raises(KeyCommandError) as failed:
        KeyCommands({}).run(command, "the Groq key")
    assert words in failed.value.message
    assert failed.value.message.startswith("The command for the Groq key failed:")
    assert "nothing was sent" in failed.value.remedy


def test_a_command_that_hangs_is_ended_at_the_time_limit() -> None:
    started = time.monotonic()
    with pytest.raises(KeyCommandError) as failed:
        KeyCommands({}, timeout=0.5).run(printing(KEY, sleep=30), "the Groq key")
    assert time.monotonic() - started < 5
    assert "did not finish within 0.5 s" in failed.value.message


def test_what_the_command_says_on_standard_error_is_redacted() -> None:
    remember_secret(OTHER_KEY)
    command = printing("", exit_code=1, stderr=f"bad token {OTHER_KEY}")
    with pytest.raises(KeyCommandError) as failed:
        KeyCommands({}).run(command, "the Groq key")
    assert OTHER_KEY[8:20] not in failed.value.one_line()


def test_the_key_is_held_for_the_time_chosen_and_0_runs_it_every_time(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    code = f"open({str(runs)!r}, 'a').write('x'); print({KEY!r})"
    command = shlex.join([sys.executable, "-c", code])
    now = [0.0]
    held = KeyCommands({}, cache_seconds=600, clock=lambda: now[0])
    held.run(command, "k")
    held.run(command, "k")
    assert runs.read_text() == "x"
    now[0] = 601.0
    held.run(command, "k")
    assert runs.read_text() == "xx"
    every_time = KeyCommands({}, cache_seconds=0)
    every_time.run(command, "k")
    every_time.run(command, "k")
    assert runs.read_text() == "xxxx"


def test_keys_set_command_stores_the_command_and_ask_sends_the_key_it_prints(
    server: ProviderServer, tmp_path: Path
) -> None:
    server.reply_with(openai_reply("hello"))
    vault = tmp_path / "vault" / "groq"  # what a password manager would decrypt
    vault.parent.mkdir()
    vault.write_text(KEY + "\n")
    saved = run_cli("keys", "set", "groq", "--command", f"cat {vault}")
    assert saved.returncode == 0, saved.stderr
    assert "It prints a key: gsk_…mN3q" in saved.stdout
    asked = run_cli("ask", "-p", "groq", "hi", env=groq_env(server))
    assert asked.returncode == 0, asked.stderr
    assert server.requests[0].header("authorization") == f"Bearer {KEY}"
    listed = run_cli("keys", "list").stdout
    assert "command: " in listed and KEY not in listed
    logged = json.loads(run_cli("requests", "--json").stdout)
    assert logged[0]["key_source"] == "global from command cat"
    # The command is kept; the key it printed is in no file byok-tui wrote.
    pieces = [KEY[i : i + 8] for i in range(len(KEY) - 7)]
    written = [path for path in app_paths().config_dir.rglob("*") if path.is_file()]
    assert any(path.name == "keys.json" for path in written)
    for path in written:
        data = path.read_bytes().decode("utf-8", errors="replace")
        assert not [p for p in pieces if p in data], path


def test_a_command_that_fails_makes_ask_exit_3_naming_the_program_and_sends_nothing(
    server: ProviderServer,
) -> None:
    run_cli("keys", "set", "groq", "--command", printing("", exit_code=1, stderr="vault is locked"))
    asked = run_cli("ask", "-p", "groq", "hi", env=groq_env(server))
    assert asked.returncode == 3
    assert "exited with status 1: vault is locked" in asked.stderr
    assert Path(sys.executable).name in asked.stderr
    assert server.requests == []


def test_a_bots_own_command_is_used_for_that_bot_only(server: ProviderServer) -> None:
    server.reply_with(openai_reply("ok"))
    assert run_cli("bot", "add", "Work", "-p", "groq").returncode == 0
    set_command = run_cli("bot", "key", "Work", "--command", printing(KEY))
    assert set_command.returncode == 0, set_command.stderr
    asked = run_cli(
        "ask", "--bot", "Work", "hi", env={**groq_env(server), "GROQ_API_KEY": "gsk_" + "E" * 52}
    )
    assert asked.returncode == 0, asked.stderr
    assert server.requests[0].header("authorization") == f"Bearer {KEY}"


# A key of no shape the registry knows (a custom provider's): only the command's own output
# can tell it is a key.
SHAPELESS_KEY = "tgk-" + "R7" * 20


def test_a_failing_command_that_repeats_its_key_on_standard_error_never_shows_it(
    server: ProviderServer,
) -> None:
    command = printing(SHAPELESS_KEY, exit_code=2, stderr=f"error: could not use {SHAPELESS_KEY}")
    with pytest.raises(KeyCommandError) as failed:
        KeyCommands({}).run(command, "the Groq key")
    assert SHAPELESS_KEY[:12] not in failed.value.one_line()
    assert "[REDACTED]" in failed.value.one_line()
    run_cli("keys", "set", "groq", "--command", command)
    asked = run_cli("ask", "-p", "groq", "hi", env=groq_env(server))
    assert asked.returncode == 3
    assert "could not use [REDACTED]" in asked.stderr
    assert SHAPELESS_KEY[:12] not in asked.stderr + asked.stdout
    exported = run_cli("export")
    assert SHAPELESS_KEY[:12] not in exported.stdout + exported.stderr
    assert server.requests == []


@pytest.mark.parametrize(
    "program",
    [
        "import sys\nwhile True: sys.stdout.write('y' * 65536)",
        "import sys\nwhile True: sys.stderr.write('n' * 65536)",
    ],
)
def test_a_command_that_prints_without_end_is_stopped_and_never_read_whole(program: str) -> None:
    started = time.monotonic()
    with pytest.raises(KeyCommandError) as failed:
        KeyCommands({}, timeout=10).run(shlex.join([sys.executable, "-c", program]), "the key")
    assert time.monotonic() - started < 5, "the output was read until the time limit"
    assert "printed more than" in failed.value.message


def test_a_command_that_prints_another_providers_key_is_warned_of_when_it_first_runs(
    server: ProviderServer,
) -> None:
    anthropic_shaped = "sk-ant-api03-" + "Z" * 90 + "AA"
    saved = run_cli("keys", "set", "groq", "--command", printing(anthropic_shaped))
    assert saved.returncode == 0, saved.stderr
    assert "looks like an Anthropic key, but the provider is Groq" in saved.stderr
    server.reply_with(openai_reply("hi"))
    asked = run_cli("ask", "-p", "groq", "hi", env=groq_env(server))
    assert "but the provider is Groq" in asked.stderr  # warned, never refused
    assert anthropic_shaped[14:30] not in saved.stderr + asked.stderr
