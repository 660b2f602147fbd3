"""MCP servers held between calls, against a real stdio server (tests/support/mcp_light.py,
started by the SDK's client as any server is): one process answers a message's listing and
every call after it; it ends, whole, when the app or `ask` ends; one that died idle is
started again when the next message lists its tools; one that died or timed out during a
call is said with that call and started again at the next (a call is never run twice); a
changed config entry starts it again with the new entry."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import signal
import time
from typing import Any

import pytest

from byok_tui.tools.client import call_tool, list_tools
from byok_tui.tools.held import HeldServers
from byok_tui.tools.servers import ToolServer
from tests.support.cli import run_cli
from tests.support.mcp_tools import LIGHT_SERVER
from tests.support.pilot import WIDTH_WITHOUT_CONFIG_PANE, replies, replying, send, settle, wait_for
from tests.support.provider_server import Seen, provider_server
from tests.tools.test_mcp_servers import REPO, connection
from tests.tools.test_tools_in_the_app import answers, app_on, calls_tool, dialog, ready


def stdio(**extra: Any) -> ToolServer:
    return ToolServer("test", LIGHT_SERVER[0], LIGHT_SERVER[1:], cwd=str(REPO), **extra)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(ChildProcessError):
        done, _status = os.waitpid(pid, os.WNOHANG)  # ours: reaped once it ended
        return done == 0
    return True


def ended_soon(pid: int, seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.1)
    return False


async def pid_of(held: HeldServers, **options: object) -> int:
    server = stdio(**options)
    result = await call_tool(server, "c", "pid", {}, limit=1000, held=held, **connection())
    assert not result.is_error, result.content
    return int(result.content)


def test_one_process_answers_the_listing_and_every_call_and_ends_with_close() -> None:
    async def scenario() -> tuple[int, int, int]:
        held = HeldServers()
        tools = await list_tools(stdio(), held=held, **connection())
        assert "pid" in {tool.spec.name for tool in tools}
        first, second = await pid_of(held), await pid_of(held)
        started = time.monotonic()
        await pid_of(held)
        took = time.monotonic() - started
        await held.close()
        assert "test" not in held
        return first, second, int(took * 1000)

    first, second, took_ms = asyncio.run(scenario())
    assert first == second, "the server was started again for a call"
    assert took_ms < 500, f"a call to a held server took {took_ms} ms"
    assert ended_soon(first), "the server outlived close()"


def test_a_server_that_died_idle_is_started_again_by_the_next_listing() -> None:
    async def scenario() -> tuple[int, int]:
        held = HeldServers()
        first = await pid_of(held)
        os.kill(first, signal.SIGKILL)
        assert ended_soon(first)
        tools = await list_tools(stdio(), held=held, **connection())
        assert tools, "a dead held server failed the listing"
        second = await pid_of(held)
        await held.close()
        return first, second

    first, second = asyncio.run(scenario())
    assert first != second


@pytest.mark.parametrize(
    ("tool", "arguments", "timeout", "said"),
    [
        ("crash", {}, 30, ("stopped", "started again at its next use")),
        ("slow", {"seconds": 30}, 2, ("did not answer within 2 s", "was ended")),
    ],
    ids=["died during the call", "timed out"],
)
def test_a_server_that_fails_a_call_is_ended_said_and_started_again_at_the_next(
    tool: str, arguments: dict[str, object], timeout: float, said: tuple[str, ...]
) -> None:
    """Never kept: a server busy with an abandoned call is not trusted with the next."""

    async def scenario() -> tuple[str, int, int]:
        held = HeldServers()
        first = await pid_of(held)
        failed = await call_tool(
            stdio(), "c", tool, arguments, limit=1000, held=held, **connection(timeout=timeout)
        )
        assert failed.is_error
        assert await asyncio.to_thread(ended_soon, first, 12), "a failed server was kept"
        second = await pid_of(held)
        await held.close()
        return failed.content, first, second

    content, first, second = asyncio.run(scenario())
    assert all(words in content for words in said), content
    assert first != second


def test_a_key_changed_in_the_store_reaches_a_held_server_at_its_next_call() -> None:
    """A server given a stored key by its config (`{key:openai}`) is held with the key it
    was started with; once that key is changed (rotated), the next call starts the server
    again with the new one, as the next message to a provider uses the new key."""
    from byok_tui.core.paths import app_paths
    from byok_tui.keys import entry_name, open_key_store

    store = open_key_store(app_paths())
    keyed = {"env": {"WEATHER_KEY": "{key:openai}"}}

    async def seen_key(held: HeldServers) -> str:
        server, asked = stdio(**keyed), {"name": "WEATHER_KEY"}
        result = await call_tool(
            server, "c", "digest", asked, limit=1000, held=held, **connection()
        )
        assert not result.is_error, result.content
        return result.content

    async def scenario() -> tuple[int, str, int, str]:
        held = HeldServers()
        store.set(entry_name("openai"), "sk-proj-" + "A" * 60)
        first, before = await pid_of(held, **keyed), await seen_key(held)
        store.set(entry_name("openai"), "sk-proj-" + "B" * 60)
        second, after = await pid_of(held, **keyed), await seen_key(held)
        await held.close()
        return first, before, second, after

    first, before, second, after = asyncio.run(scenario())
    assert before == hashlib.sha256(("sk-proj-" + "A" * 60).encode()).hexdigest()
    assert after == hashlib.sha256(("sk-proj-" + "B" * 60).encode()).hexdigest(), "old key"
    assert first != second
    assert ended_soon(first)


def test_a_changed_config_entry_starts_the_server_again() -> None:
    async def scenario() -> tuple[int, int]:
        held = HeldServers()
        first = await pid_of(held)
        second = await pid_of(held, env={"CHANGED": "1"})
        await held.close()
        return first, second

    first, second = asyncio.run(scenario())
    assert first != second
    assert ended_soon(first)


def test_ask_holds_the_server_for_every_round_and_ends_it_when_done() -> None:
    pids: list[str] = []

    def two_rounds(seen: Seen):  # type: ignore[no-untyped-def]
        results = [m for m in seen.json["messages"] if m.get("role") == "tool"]
        pids[:] = [m["content"] for m in results]
        if len(results) < 3:
            return calls_tool("test_pid", "{}")
        return answers("Done.")

    ready()
    assert run_cli("bot", "tools", "Default", "test").returncode == 0
    with provider_server(two_rounds) as server:
        env = {"BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1"}
        done = run_cli("ask", "-p", "groq", "--allow-tool", "test:*", "Pid?", env=env, timeout=120)
        assert done.returncode == 0, done.stderr
    assert len(pids) == 3 and len(set(pids)) == 1, f"one server for the message: {pids}"
    assert ended_soon(int(pids[0])), "the server outlived ask"


async def test_the_app_holds_the_server_between_messages_and_ends_it_when_it_quits() -> None:
    def calls_pid(seen: Seen):  # type: ignore[no-untyped-def]
        messages = seen.json["messages"]
        if messages[-1]["role"] == "tool":
            return answers(f"pid {messages[-1]['content']}")
        return calls_tool("test_pid", "{}")

    ready("pid")  # pre-approved in config.toml: no dialog
    assert run_cli("bot", "tools", "Default", "test").returncode == 0
    with provider_server(calls_pid) as server:
        app = app_on(server)
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
            await settle(pilot)
            await send(pilot, "Pid?")
            await wait_for(pilot, lambda: not replying(app) and "pid " in "".join(replies(app)), 30)
            await send(pilot, "Again?")
            await wait_for(pilot, lambda: len(replies(app)) == 2 and "pid " in replies(app)[1], 30)
            assert dialog(app) is None
            first, second = (int(reply.split("pid ")[1].split()[0]) for reply in replies(app))
            assert first == second, "the server was started again for the second message"
            assert alive(first)
    assert ended_soon(first), "the server outlived the app"
