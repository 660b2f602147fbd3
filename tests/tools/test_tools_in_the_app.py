"""Tools in the app, end to end: a loopback provider that calls a tool, a real MCP server
(the SDK's, over stdio) that answers it, and the app's consent: every call asks first,
showing the server, the tool and the full arguments; Allow once runs it, Always allow runs
it and every later call of that tool by the bot unasked, Deny refuses it and the model is
told; a call pre-approved in config.toml runs unasked. What ran is shown above the reply,
collapsed to one line."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import SelectionList, Static

from byok_tui.app import ByokApp
from byok_tui.app_services.tool_box import DENIED
from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.screens.tool_approval import ToolApprovalDialog
from byok_tui.storage.store import Store
from byok_tui.widgets.tool_call import ToolCallView
from tests.support.cli import run_cli
from tests.support.mcp_tools import LIGHT_SERVER
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    chat,
    make_app,
    replies,
    send,
    settle,
    wait_for,
)
from tests.support.provider_server import ProviderServer, Reply, Seen, provider_server, sse
from tests.tools.test_ask_with_tools import calls_weather

REPO = Path(__file__).resolve().parents[2]
SERVER = LIGHT_SERVER  # the SDK's own server: tests/tools/test_mcp_servers.py
KEY = "gsk_" + "A" * 52
TOLD = "Told: Oslo: snow for 1 day(s), -4 C."


def ready(*allow: str) -> None:
    open_key_store(app_paths()).set(entry_name("groq"), KEY)
    added = run_cli("mcp", "add", "test", "--cwd", str(REPO), "--", *SERVER)
    assert added.returncode == 0, added.stderr
    if allow:  # pre-approved in the server's own table
        config = app_paths().config_file
        config.write_text(config.read_text() + f"allow = {list(allow)!r}\n".replace("'", '"'))
    assert run_cli("bot", "tools", "Default", "test:weather").returncode == 0


def app_on(server: ProviderServer) -> ByokApp:
    return make_app(BYOK_TUI_GROQ_BASE_URL=f"{server.base_url}/openai/v1")


def dialog(app: ByokApp) -> ToolApprovalDialog | None:
    """The approval dialog, once it is on screen with its buttons."""
    screen = app.screen
    if isinstance(screen, ToolApprovalDialog) and screen.query("#deny"):
        return screen
    return None


def shown_text(screen: ToolApprovalDialog) -> str:
    return "\n".join(str(static.render()) for static in screen.query(Static))


def tool_lines(app: ByokApp) -> list[str]:
    return [
        str(view.query_one(".summary", Static).render()) for view in chat(app).query(ToolCallView)
    ]


def store() -> Store:
    return Store(app_paths().data_dir / "byok-tui.sqlite3")


async def asked(pilot: Pilot[None], app: ByokApp, text: str = "Weather in Oslo?") -> None:
    """Send `text` once the app is up, and wait for the approval dialog."""
    await settle(pilot)
    await send(pilot, text)
    await wait_for(pilot, lambda: dialog(app) is not None, timeout=30)


def calls_tool(name: str, arguments: str) -> Reply:
    piece = {"index": 0, "id": f"call_{name}", "function": {"name": name, "arguments": arguments}}
    said = {"choices": [{"index": 0, "delta": {"tool_calls": [piece]}}]}
    end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    return Reply(steps=sse(said, end, done=True))


def answers(text: str) -> Reply:
    said = {"choices": [{"index": 0, "delta": {"content": text}}]}
    end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    return Reply(steps=sse(said, end, done=True))


async def test_a_call_asks_first_showing_its_arguments_and_allow_once_runs_it() -> None:
    ready()
    with provider_server(calls_weather) as server:
        app = app_on(server)
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
            await asked(pilot, app)
            shown = dialog(app)
            assert shown is not None
            said = shown_text(shown)
            assert "weather" in said and "test" in said
            assert '{"city": "Oslo"}' in said, said
            assert len(server.requests) == 1, "the call waits for the answer"
            await pilot.press("a")
            await wait_for(pilot, lambda: any(TOLD in r for r in replies(app)), timeout=30)
            assert tool_lines(app) == ["▸ Tool test_weather: 30 characters back"]
            view = chat(app).query_one(ToolCallView)
            view.focus()
            await pilot.press("enter")
            assert view.expanded
            details = str(view.query_one(".details", Static).render())
            assert '{"city": "Oslo"}' in details and "Oslo: snow for 1 day(s)" in details
        assert len(server.requests) == 2
    assert server.requests[1].json["messages"][-1]["content"] == "Oslo: snow for 1 day(s), -4 C."
    assert store().approved_tools(store().bot("Default").id) == ()


async def test_deny_refuses_the_call_and_the_model_is_told() -> None:
    ready()
    with provider_server(calls_weather) as server:
        app = app_on(server)
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
            await asked(pilot, app)
            await pilot.press("escape")  # the same as Deny
            await wait_for(pilot, lambda: len(server.requests) == 2, timeout=30)
            await wait_for(pilot, lambda: bool(tool_lines(app)))
            assert tool_lines(app) == ["▸ Tool test_weather: not allowed (the model was told)"]
        assert server.requests[1].json["messages"][-1]["content"] == DENIED
    logged = [row for row in store().ledger.requests() if row["purpose"] == "tool call"]
    assert [(r["host"], r["outcome"]) for r in logged] == [("test", "denied")]


async def test_always_allow_runs_the_tool_unasked_from_then_on_for_that_bot() -> None:
    ready()
    with provider_server(calls_weather) as server:
        app = app_on(server)
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
            await asked(pilot, app)
            await pilot.press("l")
            await wait_for(pilot, lambda: len(replies(app)) == 1 and TOLD in replies(app)[0], 30)
            await send(pilot, "And again?")
            await wait_for(pilot, lambda: len(server.requests) == 4, timeout=30)
            assert dialog(app) is None, "asked again after Always allow"
            await wait_for(pilot, lambda: len(tool_lines(app)) == 2)
    assert store().approved_tools(store().bot("Default").id) == ("test:weather",)


async def test_a_tool_pre_approved_in_config_runs_unasked() -> None:
    ready("weather")

    asked: list[bool] = []

    def watched(seen: Seen) -> Reply:
        return calls_weather(seen)

    with provider_server(watched) as server:
        app = app_on(server)
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
            await settle(pilot)
            await send(pilot, "Weather in Oslo?")
            while not any(TOLD in r for r in replies(app)):
                asked.append(dialog(app) is not None)
                await pilot.pause(0.05)
                assert len(asked) < 600, "no reply within 30 s"
    assert not any(asked), "a pre-approved tool asked first"
    assert len(server.requests) == 2


async def test_a_server_that_cannot_start_is_said_and_the_message_goes_without_its_tools() -> None:
    open_key_store(app_paths()).set(entry_name("groq"), KEY)
    missing = ("/nonexistent/byok-tui-test-server",)
    assert run_cli("mcp", "add", "gone", "--", *missing).returncode == 0
    assert run_cli("bot", "tools", "Default", "gone").returncode == 0

    with provider_server(lambda _seen: answers("Without tools.")) as server:
        app = app_on(server)
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
            await settle(pilot)
            await send(pilot, "Hello?")
            await wait_for(pilot, lambda: replies(app) == ["Without tools."], timeout=30)
            notices = [str(n.render()) for n in chat(app).query(".notice")]
            assert any("The tools of gone were not offered" in n for n in notices), notices
        assert "tools" not in server.requests[0].json


async def test_the_config_pane_lists_the_servers_and_ticking_one_lets_the_bot_use_it() -> None:
    open_key_store(app_paths()).set(entry_name("groq"), KEY)
    for name in ("files", "test"):
        assert run_cli("mcp", "add", name, "--cwd", str(REPO), "--", *SERVER).returncode == 0
    assert run_cli("bot", "tools", "Default", "test:weather").returncode == 0
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: chat(app).config_pane is not None)
        listed = chat(app).query_one("#bot-tools", SelectionList)
        labels = [str(listed.get_option_at_index(i).prompt) for i in range(listed.option_count)]
        assert labels == ["files", "test (weather only)"]
        assert listed.selected == ["test"]
        listed.toggle("files")
        await wait_for(
            pilot,
            lambda: set(store().bot_tools(store().bot("Default").id)) == {"files", "test:weather"},
        )
        listed.toggle("files")
        listed.toggle("test")
        await wait_for(pilot, lambda: store().bot_tools(store().bot("Default").id) == ())


async def test_the_config_pane_says_how_to_add_a_server_when_none_is_configured() -> None:
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: chat(app).config_pane is not None)
        note = str(chat(app).query_one("#bot-tools-note", Static).render())
        assert "byok-tui mcp add NAME -- COMMAND" in note


def activity(app: ByokApp) -> str:
    return str(chat(app).query_one("#activity").render()).strip()


async def test_the_estimate_counts_the_tools_definitions_once_they_were_listed() -> None:
    """They go with every request of the message, on the user's key. Listing them for an
    estimate would start the servers, so until a send has listed them the line says so."""
    from byok_tui.app_services import tool_box

    ready()
    tool_box._listed_tokens.clear()  # listed by no earlier test in this process
    with provider_server(calls_weather) as server:
        app = app_on(server)
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
            await settle(pilot)
            await pilot.press(*"hello")
            await wait_for(pilot, lambda: "tools: counted once listed" in activity(app))
            assert server.requests == [], "an estimate made a request"
            await pilot.press("enter")
            await wait_for(pilot, lambda: dialog(app) is not None, timeout=30)
            await pilot.press("a")
            await wait_for(pilot, lambda: any(TOLD in r for r in replies(app)), timeout=30)
            await pilot.press(*"more")
            await wait_for(pilot, lambda: "tools ≈" in activity(app))
            assert "a turn" in activity(app)


async def test_escape_stops_a_running_call_and_the_reply() -> None:
    """A call that would take 30 s: Escape ends it at once, and no round follows."""
    import time

    open_key_store(app_paths()).set(entry_name("groq"), KEY)
    assert run_cli("mcp", "add", "test", "--cwd", str(REPO), "--", *SERVER).returncode == 0
    assert run_cli("bot", "tools", "Default", "test:slow").returncode == 0

    with provider_server(lambda _seen: calls_tool("test_slow", '{"seconds": 30}')) as server:
        app = app_on(server)
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
            await asked(pilot, app, "Wait for me")
            await pilot.press("a")
            await pilot.pause(1.0)  # the server started, the call running
            column = chat(app).column
            assert column.busy
            pressed = time.monotonic()
            await pilot.press("escape")
            await wait_for(pilot, lambda: not column.busy, timeout=10)
            assert time.monotonic() - pressed < 5
        assert len(server.requests) == 1


async def test_a_reply_s_tool_calls_are_shown_again_when_its_conversation_is_opened() -> None:
    ready()
    with provider_server(calls_weather) as server:
        app = app_on(server)
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
            await asked(pilot, app)
            await pilot.press("d")
            await wait_for(pilot, lambda: len(server.requests) == 2, timeout=30)
            await wait_for(pilot, lambda: not chat(app).column.busy)
    again = make_app()
    async with again.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: bool(tool_lines(again)))
        assert tool_lines(again) == ["▸ Tool test_weather: not allowed (the model was told)"]
        view = chat(again).query_one(ToolCallView)
        view.focus()
        await pilot.press("enter")
        assert '{"city": "Oslo"}' in str(view.query_one(".details", Static).render())


async def test_a_hostile_result_is_shown_as_the_text_it_is() -> None:
    """Escape sequences are gone before anyone sees the result; markup is drawn as text."""
    open_key_store(app_paths()).set(entry_name("groq"), KEY)
    added = run_cli("mcp", "add", "test", "--cwd", str(REPO), "--", *SERVER)
    assert added.returncode == 0
    config = app_paths().config_file
    config.write_text(config.read_text() + 'allow = ["hostile"]\n')
    assert run_cli("bot", "tools", "Default", "test:hostile").returncode == 0

    def calls_hostile(seen: Seen) -> Reply:
        if any(m.get("role") == "tool" for m in seen.json["messages"]):
            return answers("Done.")
        return calls_tool("test_hostile", "{}")

    with provider_server(calls_hostile) as server:
        app = app_on(server)
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
            await settle(pilot)
            await send(pilot, "Go")
            await wait_for(pilot, lambda: "Done." in "".join(replies(app)), timeout=30)
            view = chat(app).query_one(ToolCallView)
            view.focus()
            await pilot.press("enter")
            details = view.query_one(".details", Static).render()
            shown = str(details)
            assert "\x1b" not in shown and "\x07" not in shown
            assert "[link=https://evil.example]click[/link] done" in shown


async def test_a_tool_its_server_declares_read_only_still_asks_and_says_so() -> None:
    """What a server declares is its word: shown, never taken as approval."""
    open_key_store(app_paths()).set(entry_name("groq"), KEY)
    assert run_cli("mcp", "add", "test", "--cwd", str(REPO), "--", *SERVER).returncode == 0
    assert run_cli("bot", "tools", "Default", "test:today").returncode == 0

    def calls_today(seen: Seen) -> Reply:
        if any(m.get("role") == "tool" for m in seen.json["messages"]):
            return answers("It is the 29th.")
        return calls_tool("test_today", "{}")

    with provider_server(calls_today) as server:
        app = app_on(server)
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
            await asked(pilot, app, "What day is it?")
            shown = dialog(app)
            assert shown is not None
            assert "read-only (its word, not a promise)" in shown_text(shown)
            await pilot.press("a")
            await wait_for(pilot, lambda: replies(app) == ["It is the 29th."], timeout=30)
