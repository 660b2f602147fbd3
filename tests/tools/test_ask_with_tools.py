"""`ask` with tools, end to end: a loopback provider that calls a tool, a real MCP server (the
SDK's, over stdio) that answers it, and the consent rule of the shell: a call runs only when
`--allow-tool` allows it, any other is refused and the model told; every round is a request
of its own; a reply that keeps calling stops after ten; the calls are kept with the reply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from byok_tui.cli.ask_tools import DENIED
from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.storage.store import Store
from tests.support.cli import run_cli
from tests.support.mcp_tools import LIGHT_SERVER
from tests.support.provider_server import ProviderServer, Reply, Seen, provider_server, sse

REPO = Path(__file__).resolve().parents[2]
SERVER = LIGHT_SERVER  # the SDK's own server: tests/tools/test_mcp_servers.py
KEY = "gsk_" + "T" * 52


def calls_weather(seen: Seen) -> Reply:
    """Asks for the weather until a tool's answer follows the user's last message, then
    answers."""
    messages = seen.json["messages"]
    last_asked = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    if any(m.get("role") == "tool" for m in messages[last_asked:]):
        said = next(m["content"] for m in reversed(messages) if m["role"] == "tool")
        text = {"choices": [{"index": 0, "delta": {"content": f"Told: {said}"}}]}
        end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        return Reply(steps=sse(text, end, done=True))
    return always_calls(seen)


def always_calls(seen: Seen) -> Reply:
    piece = {
        "index": 0,
        "id": f"call_{len(seen.json['messages'])}",
        "function": {"name": "test_weather", "arguments": '{"city": "Oslo"}'},
    }
    said = {"choices": [{"index": 0, "delta": {"content": "Looking. ", "tool_calls": [piece]}}]}
    end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    return Reply(steps=sse(said, end, done=True))


def ready() -> None:
    open_key_store(app_paths()).set(entry_name("groq"), KEY)
    assert run_cli("mcp", "add", "test", "--cwd", str(REPO), "--", *SERVER).returncode == 0
    assert run_cli("bot", "tools", "Default", "test:weather").returncode == 0


def ask(server: ProviderServer, *extra: str) -> tuple[int, str, str]:
    env = {"BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1"}
    done = run_cli("ask", "-p", "groq", *extra, "Weather in Oslo?", env=env, timeout=120)
    return done.returncode, done.stdout, done.stderr


def test_an_allowed_call_runs_and_its_result_goes_back_in_a_request_of_its_own() -> None:
    ready()
    with provider_server(calls_weather) as server:
        code, out, err = ask(server, "--allow-tool", "test:weather")
        assert code == 0, err
        assert len(server.requests) == 2
        first, second = (request.json for request in server.requests)
    assert [tool["function"]["name"] for tool in first["tools"]] == ["test_weather"]
    assert "offering 1 tool(s)" in err
    assert 'tool test:weather {"city": "Oslo"}: allowed by --allow-tool' in err
    assert second["messages"][-2]["tool_calls"][0]["function"]["name"] == "test_weather"
    assert second["messages"][-1] == {
        "role": "tool",
        "tool_call_id": second["messages"][-2]["tool_calls"][0]["id"],
        "content": "Oslo: snow for 1 day(s), -4 C.",
    }
    assert "Told: Oslo: snow for 1 day(s), -4 C." in out
    store = Store(app_paths().data_dir / "byok-tui.sqlite3")
    logged = [row for row in store.ledger.requests() if row["purpose"] == "tool call"]
    assert [(r["host"], r["path"], r["outcome"]) for r in logged] == [
        ("test", "/weather → 30 characters", "ok")
    ]
    assert "Oslo" not in json.dumps(logged), "a tool call's arguments or result in the log"
    reply = store.bot("Default")
    conversation = store.conversations(reply.id)[0]
    stored = store.messages(conversation.id)[-1]
    turns = store.tool_turns_of(stored.id)
    assert turns[0]["calls"][0]["name"] == "test_weather"  # type: ignore[index]
    assert "Oslo: snow" in json.dumps(turns)
    assert stored.content.startswith("Looking. ") and "Told:" in stored.content


def test_a_call_not_allowed_is_refused_and_the_model_told() -> None:
    ready()
    with provider_server(calls_weather) as server:
        code, out, err = ask(server)
        assert code == 0, err
        tool_message = server.requests[1].json["messages"][-1]
    assert tool_message["content"] == DENIED
    assert "denied (allow it with --allow-tool)" in err
    assert "Oslo: snow" not in out


def test_a_reply_that_keeps_calling_stops_after_ten_requests() -> None:
    ready()
    with provider_server(always_calls) as server:
        code, _out, err = ask(server, "--allow-tool", "test:*")
        assert len(server.requests) == 10
    assert code == 0
    assert "asked for tools again after 10 rounds; stopped there" in err


def test_a_budget_the_first_round_used_up_stops_the_next() -> None:
    """Budgets are checked before each round, counting what the rounds so far cost."""

    def calls_and_bills(seen: Seen) -> Reply:
        reply = always_calls(seen)
        usage = {"choices": [], "usage": {"prompt_tokens": 200_000, "completion_tokens": 50_000}}
        return Reply(steps=[*reply.steps[:-1], *sse(usage), reply.steps[-1]])

    ready()
    open_key_store(app_paths()).set(entry_name("openai"), "sk-proj-" + "T" * 60)
    assert run_cli("budget", "set", "openai", "0.01", "--per", "day").returncode == 0
    with provider_server(calls_and_bills) as server:
        env = {"BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1"}
        done = run_cli(
            "ask", "-p", "openai", "--allow-tool", "test:weather", "Weather?", env=env, timeout=120
        )
        assert len(server.requests) == 1
    assert done.returncode == 9, done.stderr
    assert "tool test:weather" in done.stderr


def test_each_round_is_a_request_of_its_own_in_the_request_log_and_so_is_the_call() -> None:
    """Newest first: the second round, the tool call between them, the first round."""
    ready()
    with provider_server(calls_weather) as server:
        assert ask(server, "--allow-tool", "test:weather")[0] == 0
    logged = json.loads(run_cli("requests", "--json").stdout)
    assert [entry["purpose"] for entry in logged] == ["chat", "tool call", "chat"]


def test_a_bot_given_no_tools_is_offered_none() -> None:
    open_key_store(app_paths()).set(entry_name("groq"), KEY)
    with provider_server(calls_weather) as server:
        ask(server, "--allow-tool", "test:weather")
        assert "tools" not in server.requests[0].json


def test_the_calls_go_with_the_reply_into_an_export_an_import_and_markdown(
    tmp_path: Path,
) -> None:
    from byok_tui.storage.markdown_export import export_markdown
    from byok_tui.storage.transfer import export_all, import_all

    ready()
    with provider_server(calls_weather) as server:
        assert ask(server, "--allow-tool", "test:weather")[0] == 0
    store = Store(app_paths().data_dir / "byok-tui.sqlite3")
    exported = export_all(store, [KEY])
    (turns,) = [
        m["tool_turns"]
        for c in json.loads(exported)["conversations"]
        for m in c["messages"]
        if m.get("tool_turns")
    ]
    assert "test_weather" in turns and "Oslo: snow" in turns
    assert '- `test_weather` `{"city": "Oslo"}` → result, 30 characters' in export_markdown(store)
    elsewhere = Store(tmp_path / "elsewhere.sqlite3")
    import_all(elsewhere, exported)
    (conversation,) = elsewhere.conversations(elsewhere.bot("Default").id)
    reply = elsewhere.messages(conversation.id)[-1]
    assert elsewhere.tool_turns_of(reply.id)[0]["calls"][0]["name"] == "test_weather"  # type: ignore[index]


def test_an_imported_reply_s_tool_calls_are_outside_text() -> None:
    from byok_tui.storage.export_checks import ExportFormatError, _check_tool_turns

    hostile = json.dumps(
        [
            {
                "said": "\x1b]0;owned\x07hi",
                "calls": [{"id": "c\x1b[2J", "name": "rm\x1b[31m", "arguments": "{}", "x": 1}],
                "results": [{"id": "c", "name": "rm", "content": "\x1b[2Jdone", "error": 0}],
                "extra": "dropped",
            }
        ]
    )
    kept = _check_tool_turns(hostile)
    assert kept is not None and "\x1b" not in kept and "\x07" not in kept
    assert "extra" not in kept and '"x"' not in kept
    for broken in ('{"not": "a list"}', "[1]", "not json", json.dumps([{"calls": "x"}])):
        with pytest.raises(ExportFormatError):
            _check_tool_turns(broken)
