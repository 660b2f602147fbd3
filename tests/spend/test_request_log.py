"""A log of every request made with a key: when, provider, why, method, host, path without the
query, the key's source and last four characters, status, duration, tokens and cost. Never a
key, a body or a query string, in any field."""

from __future__ import annotations

import json
from typing import Any

from byok_tui.core.paths import app_paths
from byok_tui.core.registry import get_provider
from byok_tui.keys import open_key_store
from byok_tui.providers.client import ProviderClient
from byok_tui.providers.errors import ProviderError
from byok_tui.providers.types import RequestRecord, TextDelta, Usage
from byok_tui.spend.pricing import cost_of
from tests.support.cli import run_cli
from tests.support.provider_client import chat, client_for
from tests.support.provider_server import ProviderServer, Reply, openai_reply

KEY = "sk-proj-" + "L" * 56 + "x9Qa"
GEMINI_KEY = "AIzaSy" + "G" * 29 + "w7Zk"
USAGE = {"prompt_tokens": 1204, "completion_tokens": 388}


def logged(*args: str) -> list[dict[str, Any]]:
    printed = run_cli("requests", "--json", *args)
    assert printed.returncode == 0, printed.stderr
    rows: list[dict[str, Any]] = json.loads(printed.stdout)
    return rows


def assert_holds_no_piece_of(key: str, text: str) -> None:
    pieces = [key[i : i + 8] for i in range(len(key) - 7)]
    assert not [piece for piece in pieces if piece in text]


def test_an_asked_reply_is_logged_with_its_key_source_last_four_tokens_and_cost(
    server: ProviderServer,
) -> None:
    run_cli("keys", "set", "openai", stdin=KEY)
    server.reply_with(openai_reply("Logged.", usage=USAGE))
    env = {"BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1"}
    assert run_cli("ask", "-p", "openai", "-m", "gpt-5.5", "hi", env=env).returncode == 0

    (row,) = logged()
    expected = cost_of("openai", "gpt-5.5", Usage(1204, 388)).usd
    assert {k: row[k] for k in row if k not in ("uuid", "started", "duration_ms")} == {
        "provider": "openai",
        "purpose": "chat",
        "method": "POST",
        "host": "127.0.0.1",
        "path": "/v1/chat/completions",
        "key_source": "global",
        "key_last4": "x9Qa",
        "model": "gpt-5.5",
        "status": 200,
        "outcome": "ok",
        "input_tokens": 1204,
        "output_tokens": 388,
        "cost_usd": expected,
    }
    assert row["duration_ms"] >= 0
    shown = run_cli("requests").stdout
    assert "POST 127.0.0.1/v1/chat/completions" in shown and "global …x9Qa" in shown
    for text in (json.dumps(row), shown):
        assert_holds_no_piece_of(KEY, text)


def test_geminis_key_in_the_query_string_is_never_logged(server: ProviderServer) -> None:
    run_cli("keys", "set", "google", stdin=GEMINI_KEY)
    body = {"candidates": [{"content": {"parts": [{"text": "Hi"}]}, "finishReason": "STOP"}]}
    server.reply_with(Reply(steps=[f"data: {json.dumps(body)}\r\n\r\n".encode()]))
    env = {"BYOK_TUI_GOOGLE_BASE_URL": f"{server.base_url}/v1beta"}
    printed = run_cli("ask", "-p", "google", "-m", "gemini-3.8-flash", "hi", env=env)
    assert printed.returncode == 0, printed.stderr
    assert "key=" in server.requests[0].target  # Gemini's own place for the key

    (row,) = logged()
    assert row["path"] == "/v1beta/models/gemini-3.8-flash:streamGenerateContent"
    assert row["key_last4"] == "w7Zk"
    assert_holds_no_piece_of(GEMINI_KEY, json.dumps(row) + run_cli("requests").stdout)


def test_a_refused_request_and_a_model_list_are_logged_with_how_they_ended(
    server: ProviderServer,
) -> None:
    run_cli("keys", "set", "groq", stdin="gsk_" + "Q" * 48 + "Ab12")
    env = {"BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1"}
    error = json.dumps({"error": {"message": "Invalid API Key"}}).encode()
    server.reply_with(Reply(401, {"content-type": "application/json"}, [error]))
    assert run_cli("ask", "-p", "groq", "hi", env=env).returncode == 4
    listing = b'{"data":[{"id":"m1"}]}'
    server.reply_with(Reply(headers={"content-type": "application/json"}, steps=[listing]))
    assert run_cli("models", "--refresh", "-p", "groq", env=env).returncode == 0

    models, refused = logged()  # newest first
    assert (refused["purpose"], refused["status"], refused["outcome"]) == ("chat", 401, "auth")
    assert refused["cost_usd"] is None and refused["input_tokens"] is None
    assert (models["purpose"], models["method"], models["path"]) == (
        "models",
        "GET",
        "/openai/v1/models",
    )
    assert (models["status"], models["outcome"], models["key_last4"]) == (200, "ok", "Ab12")


async def test_a_stopped_reply_and_an_unreachable_server_are_logged(
    server: ProviderServer,
) -> None:
    seen: list[RequestRecord] = []
    client = client_for("openai", server, open_key_store(app_paths()), key=KEY)
    client.on_request = seen.append
    server.reply_with(openai_reply("one ", "two ", "three", pause=0.3))
    async with client:
        stream = client.stream_chat(get_provider("openai"), chat("gpt-5.5"))
        async for event in stream:
            if isinstance(event, TextDelta):
                break
        await stream.aclose()  # as Esc does
        assert [(r.status, r.outcome) for r in seen] == [(200, "stopped")]

        nobody_there = {"BYOK_TUI_OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
        unreachable = ProviderClient(open_key_store(app_paths()), environ=nobody_there)
        unreachable.on_request = seen.append
        async with unreachable:
            try:
                async for _event in unreachable.stream_chat(get_provider("openai"), chat()):
                    pass
            except ProviderError:
                pass
    assert [(r.status, r.outcome) for r in seen[1:]] == [(None, "network")]
    assert seen[1].host == "127.0.0.1" and seen[1].key_last4 == "x9Qa"


async def test_a_short_key_is_not_shown_even_in_part(server: ProviderServer) -> None:
    seen: list[RequestRecord] = []
    client = client_for("mistral", server, open_key_store(app_paths()), key="short-key-12")
    client.on_request = seen.append
    server.reply_with(openai_reply("ok"))
    async with client:
        events = [e async for e in client.stream_chat(get_provider("mistral"), chat())]
    assert events and [(r.key_source, r.key_last4) for r in seen] == [("global", None)]


def test_requests_says_so_when_there_are_none() -> None:
    printed = run_cli("requests", "--since", "1d")
    assert printed.returncode == 0 and "No requests in that time." in printed.stdout
