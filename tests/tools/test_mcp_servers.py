"""MCP servers over stdio and streamable HTTP on 127.0.0.1: configured from the shell, their
tools listed, calls made; and the promises: no key reaches a server unless its own config names
it, what a server says is outside text (no escape sequence, no key, bounded), a slow, failing or
crashing server is an error result for the model, never a crash of byok-tui. The protocol is
checked against real servers written with the SDK (tests/support/mcp_server.py): listing, a
call's answer, a tool's failure, HTTP. What byok-tui itself does with a server (the environment
it gives it, its log, a result cut or cleaned, a timeout, a crash) is checked against the
hand-written server of the same tools (tests/support/mcp_light.py), which starts in ~0.05 s of
CPU where the SDK's takes ~1 s."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from byok_tui.core.config import ConfigError, load_config
from byok_tui.core.paths import app_paths
from byok_tui.core.redaction import remember_secret
from byok_tui.keys import entry_name, open_key_store
from byok_tui.tools.client import call_tool, list_tools
from byok_tui.tools.servers import ToolServer, configured_servers, parse_server
from tests.support.cli import run_cli
from tests.support.mcp_tools import LIGHT_SERVER, SDK_SERVER

REPO = Path(__file__).resolve().parents[2]
SERVER = SDK_SERVER
OPENAI_KEY = "sk-proj-" + "Q" * 60
LEAKED_IN_ENV = {
    "OPENAI_API_KEY": "sk-proj-" + "E" * 60,
    "GROQ_API_KEY": "gsk_" + "E" * 52,
    "MY_SERVICE_TOKEN": "tok-" + "E" * 30,
}


def stdio(**extra: Any) -> ToolServer:
    """The SDK's server, over stdio."""
    return ToolServer("test", SERVER[0], SERVER[1:], cwd=str(REPO), **extra)


def light(**extra: Any) -> ToolServer:
    """The hand-written server of the same tools, over stdio."""
    return ToolServer("test", LIGHT_SERVER[0], LIGHT_SERVER[1:], cwd=str(REPO), **extra)


def connection(timeout: float = 30, environ: dict[str, str] | None = None) -> dict[str, Any]:
    store = open_key_store(app_paths())

    def key_of(provider_id: str) -> str:
        value = store.get(entry_name(provider_id))
        assert value, provider_id
        return str(value)

    return {
        "environ": {**os.environ, **(environ or {})},
        "key_of": key_of,
        "log": app_paths().log_dir / "mcp-test.log",
        "timeout": timeout,
    }


def call(server: ToolServer, name: str, arguments: dict[str, Any], **options: Any) -> Any:
    limit = options.pop("limit", 100_000)
    return asyncio.run(
        call_tool(server, "call_1", name, arguments, limit=limit, **connection(**options))
    )


# The shell --------------------------------------------------------------------------------


def test_servers_are_added_listed_and_removed_from_the_shell() -> None:
    added = run_cli(
        "mcp", "add", "test", "--env", "PROJECT=notes", "--timeout", "20", "--cwd", str(REPO),
        "--", *SERVER,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    web = run_cli(
        "mcp", "add", "web", "--url", "http://127.0.0.1:9/mcp",
        "--header", "Authorization=Bearer {key:openai}",
    )  # fmt: skip
    assert web.returncode == 0, web.stderr
    listed = run_cli("mcp", "list").stdout
    assert "test stdio " in listed and "-m tests.support.mcp_server (given: env PROJECT)" in listed
    assert "web http http://127.0.0.1:9/mcp (given: header Authorization, key of openai)" in listed
    (server,) = [s for s in configured_servers(load_config(app_paths().config_file)) if s.url]
    assert server.headers == {"Authorization": "Bearer {key:openai}"}
    assert run_cli("mcp", "rm", "web").returncode == 0
    assert "web" not in run_cli("mcp", "list").stdout
    again = run_cli("mcp", "add", "test", "--", "true")
    assert again.returncode == 1 and "exists already" in again.stderr


def test_a_key_written_out_for_a_server_is_refused_and_nothing_added() -> None:
    open_key_store(app_paths()).set(entry_name("openai"), OPENAI_KEY)
    for option in (f"OPENAI_API_KEY={OPENAI_KEY}", "X=gsk_" + "Z" * 52):
        refused = run_cli("mcp", "add", "leaky", "--env", option, "--", *SERVER)
        assert refused.returncode == 2 and "holds a key written out" in refused.stderr
        assert OPENAI_KEY not in refused.stderr
    header = run_cli("mcp", "add", "web", "--url", "https://x.example/mcp", "--header",
                     f"Authorization=Bearer {OPENAI_KEY}")  # fmt: skip
    assert header.returncode == 2
    assert "leaky" not in run_cli("mcp", "list").stdout
    assert "web" not in run_cli("mcp", "list").stdout
    by_reference = run_cli("mcp", "add", "ok", "--env", "K={key:openai}", "--", *SERVER)
    assert by_reference.returncode == 0, by_reference.stderr


def test_mcp_tools_starts_the_server_lists_its_tools_and_shows_no_escape_sequence() -> None:
    assert run_cli("mcp", "add", "test", "--cwd", str(REPO), "--", *SERVER).returncode == 0
    listed = run_cli("mcp", "tools", "test", timeout=60)
    assert listed.returncode == 0, listed.stderr
    for name in ("weather", "slow", "broken", "huge", "hostile", "crash", "environment"):
        assert f"\n{name}" in listed.stdout
    assert "\x1b" not in listed.stdout + listed.stderr
    assert "red [bold]markup[/bold] in a description." in listed.stdout  # shown as written


def test_a_server_that_cannot_be_reached_is_one_line_with_its_remedy() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    run_cli("mcp", "add", "gone", "--url", f"http://127.0.0.1:{port}/mcp", "--timeout", "5")
    said = run_cli("mcp", "tools", "gone", timeout=60)
    assert said.returncode == 1
    assert said.stderr.startswith("byok-tui: MCP server gone:") and "Traceback" not in said.stderr
    assert "byok-tui mcp list" in said.stderr


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ({}, "either `command`"),
        ({"command": "x", "url": "https://x"}, "either `command`"),
        ({"url": "ftp://x"}, "http:// or https://"),
        ({"command": "x", "args": "not a list"}, "args must be a list"),
        ({"command": "x", "env": {"A": 1}}, "env must be a table of strings"),
        ({"command": "x", "timeout": 0}, "timeout must be a number of seconds above 0"),
    ],
)
def test_a_server_s_config_in_error_says_what_is_wrong(table: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        parse_server("a", table, "config.toml")


# No key reaches a tool server implicitly ----------------------------------------------------


def environment_seen(server: ToolServer, environ: dict[str, str]) -> dict[str, str]:
    result = call(server, "environment", {}, environ=environ)
    assert not result.is_error, result.content
    return dict(line.split("=", 1) for line in result.content.splitlines() if "=" in line)


def test_a_stdio_server_gets_none_of_the_user_s_keys_or_tokens() -> None:
    open_key_store(app_paths()).set(entry_name("openai"), OPENAI_KEY)
    seen = environment_seen(light(), LEAKED_IN_ENV)
    for name, value in LEAKED_IN_ENV.items():
        assert name not in seen and value not in str(seen)
    assert OPENAI_KEY not in str(seen)
    assert "PYTHONPATH" not in seen  # only the allow-list: PATH, HOME, USER, LANG...
    assert seen.get("PATH") == os.environ["PATH"]


def test_a_stored_key_reaches_a_server_only_by_its_own_config_and_comes_back_redacted() -> None:
    open_key_store(app_paths()).set(entry_name("openai"), OPENAI_KEY)
    remember_secret(OPENAI_KEY)
    server = light(env={"UPSTREAM_KEY": "{key:openai}", "PROJECT": "notes"})
    result = call(server, "environment", {})
    # The server was given it (it echoes its environment back), and the result that comes
    # back to byok-tui has it redacted before anything stores, shows or sends it on.
    assert "UPSTREAM_KEY=" in result.content and "PROJECT=notes" in result.content
    assert OPENAI_KEY not in result.content


def test_what_a_server_prints_is_logged_with_its_key_redacted() -> None:
    """A server given a key by its own config may print it: its standard error goes to a
    private log with every known key redacted, never to the terminal."""
    open_key_store(app_paths()).set(entry_name("openai"), OPENAI_KEY)
    remember_secret(OPENAI_KEY)
    result = call(light(env={"UPSTREAM_KEY": "{key:openai}"}), "chatty", {})
    assert result.content == "said it all"
    log = app_paths().log_dir / "mcp-test.log"
    logged = log.read_text(encoding="utf-8")
    assert "UPSTREAM_KEY=" in logged and OPENAI_KEY not in logged
    assert oct(log.stat().st_mode & 0o777) == "0o600"


def test_a_log_that_is_a_symlink_is_refused_and_nothing_is_started(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("")
    log = app_paths().log_dir / "mcp-test.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.symlink_to(target)
    result = call(light(), "chatty", {})
    assert result.is_error and "cannot write the MCP server's log" in result.content
    assert target.read_text() == ""


# Calls ----------------------------------------------------------------------------------------


def test_a_call_answers_with_the_tool_s_text() -> None:
    result = call(stdio(), "weather", {"city": "Oslo", "days": 2})
    assert (result.call_id, result.name, result.is_error) == ("call_1", "weather", False)
    assert result.content == "Oslo: snow for 2 day(s), -4 C."


def test_a_failing_tool_is_an_error_result() -> None:
    result = call(stdio(), "broken", {})
    assert result.is_error and "broken" in result.content


def test_a_huge_result_is_cut_and_the_model_is_told() -> None:
    result = call(light(), "huge", {"size": 250_000}, limit=100_000)
    assert len(result.content) < 100_200
    assert result.content.endswith("[byok-tui cut the result here: 150,000 more characters]")


def test_escape_sequences_in_a_result_never_reach_the_terminal() -> None:
    result = call(light(), "hostile", {})
    assert "\x1b" not in result.content and "\x07" not in result.content
    assert "[link=https://evil.example]click[/link]" in result.content  # text, never markup


@pytest.mark.long(5)
def test_a_slow_call_is_abandoned_at_its_timeout_and_the_server_ended() -> None:
    started = time.monotonic()
    result = call(light(), "slow", {"seconds": 30}, timeout=3)
    assert time.monotonic() - started < 15
    assert result.is_error and "did not answer within 3 s" in result.content


def test_a_server_that_dies_mid_call_is_an_error_result_not_a_crash() -> None:
    result = call(light(), "crash", {}, timeout=20)
    assert result.is_error and result.content


def test_a_server_that_cannot_start_is_an_error_result() -> None:
    result = call(ToolServer("nothing", "/nonexistent/server"), "weather", {"city": "x"})
    assert result.is_error and "could not be started" in result.content


# Streamable HTTP --------------------------------------------------------------------------------


@contextlib.contextmanager
def http_server() -> Iterator[str]:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    process = subprocess.Popen(
        [*SERVER, "--http", str(port)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_streamable_http_server_lists_its_tools_and_answers_a_call() -> None:
    with http_server() as url:
        server = ToolServer("web", url=url)
        tools = asyncio.run(list_tools(server, **connection()))
        assert {tool.spec.name for tool in tools} >= {"weather", "slow", "environment"}
        hostile = next(tool for tool in tools if tool.spec.name == "hostile")
        assert "\x1b" not in hostile.spec.description
        result = call(server, "weather", {"city": "Bergen"})
        assert result.content == "Bergen: snow for 1 day(s), -4 C."
