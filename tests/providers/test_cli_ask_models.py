"""`byok-tui ask` and `byok-tui models` as real subprocesses against loopback servers."""

from __future__ import annotations

import json

import pytest

from byok_tui.core.paths import app_paths
from tests.support.cli import run_cli
from tests.support.provider_server import ProviderServer, Reply, openai_reply, sse

KEY = "gsk_" + "C" * 52


def groq_env(server: ProviderServer) -> dict[str, str]:
    return {"BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1", "GROQ_API_KEY": KEY}


def test_ask_streams_the_reply_to_standard_output(server: ProviderServer) -> None:
    server.reply_with(openai_reply("One ", "plus one ", "is two."))
    result = run_cli(
        "ask", "-p", "groq", "--system", "Be brief.", "What", "is", "1+1?", env=groq_env(server)
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "One plus one is two.\n"
    body = server.requests[0].json
    assert body["model"] == "llama-3.3-70b-versatile"  # the registry's default for groq
    assert body["messages"][-1] == {"role": "user", "content": "What is 1+1?"}
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}


def test_ask_reads_the_prompt_from_standard_input(server: ProviderServer) -> None:
    server.reply_with(openai_reply("ok"))
    result = run_cli(
        "ask",
        "-p",
        "groq",
        "-m",
        "llama-3.1-8b-instant",
        stdin="diff --git a b\n+line\n",
        env=groq_env(server),
    )
    assert result.returncode == 0
    body = server.requests[0].json
    assert body["model"] == "llama-3.1-8b-instant"
    assert body["messages"][-1]["content"] == "diff --git a b\n+line\n"


def test_ask_without_a_key_exits_3_and_sends_nothing(server: ProviderServer) -> None:
    env = groq_env(server)
    del env["GROQ_API_KEY"]
    result = run_cli("ask", "-p", "groq", "hi", env=env)
    assert result.returncode == 3
    assert "No API key for Groq" in result.stderr
    assert server.requests == []


@pytest.mark.parametrize(
    ("status", "body", "code", "words"),
    [
        (
            401,
            {"error": {"message": "Invalid API Key", "code": "invalid_api_key"}},
            4,
            "Invalid API key",
        ),
        (
            429,
            {"error": {"message": "Rate limit reached. Please try again in 3.5s."}},
            5,
            "Wait 4 s",
        ),
        (402, {"error": {"message": "pay up"}}, 7, "free-tier model"),
        (404, {"error": {"message": "no such model"}}, 8, "models --refresh"),
        (500, {"error": {"message": "internal error"}}, 10, "internal error"),
        (503, {"error": {"message": "overloaded"}}, 10, "overloaded"),
    ],
)
def test_ask_errors_are_one_clear_line_with_a_distinct_exit_status(
    server: ProviderServer, status: int, body: dict, code: int, words: str
) -> None:
    server.reply_with(
        Reply(status, {"content-type": "application/json"}, [json.dumps(body).encode()])
    )
    result = run_cli("ask", "-p", "groq", "hi", env=groq_env(server))
    assert result.returncode == code
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert words in lines[0]
    assert "Traceback" not in result.stderr
    assert KEY not in result.stderr + result.stdout


def test_ask_keeps_the_partial_reply_when_the_connection_drops(server: ProviderServer) -> None:
    server.reply_with(
        Reply(steps=sse({"choices": [{"index": 0, "delta": {"content": "Half"}}]}), abort=True)
    )
    result = run_cli("ask", "-p", "groq", "hi", env=groq_env(server))
    assert result.returncode == 6
    assert result.stdout == "Half\n"
    assert "dropped in the middle of the reply" in result.stderr


def test_ask_network_failure_exits_6() -> None:
    env = {"BYOK_TUI_GROQ_BASE_URL": "http://127.0.0.1:9/openai/v1", "GROQ_API_KEY": KEY}
    result = run_cli("ask", "-p", "groq", "hi", env=env)
    assert result.returncode == 6
    assert "cannot reach the provider" in result.stderr


def test_ask_help_documents_the_exit_statuses() -> None:
    text = run_cli("ask", "--help").stdout
    for line in ("3 no API key", "5 rate limited", "6 network failure", "10 the provider's"):
        assert line in text


def test_models_lists_registry_and_discovered_models_and_caches_them(
    server: ProviderServer,
) -> None:
    listing = {
        "object": "list",
        "data": [
            {"id": "llama-3.3-70b-versatile", "context_window": 131072},
            {"id": "brand-new-model", "context_window": 8192},
        ],
    }
    server.reply_with(
        Reply(headers={"content-type": "application/json"}, steps=[json.dumps(listing).encode()])
    )
    result = run_cli("models", "-p", "groq", env=groq_env(server))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    default_row = next(line for line in lines if "llama-3.3-70b-versatile" in line)
    assert "default" in default_row
    assert any("brand-new-model" in line and "discovered" in line for line in lines)
    assert server.requests[0].header("authorization") == f"Bearer {KEY}"
    cache = (app_paths().data_dir / "models-cache.json").read_text()
    assert "brand-new-model" in cache
    assert KEY not in cache

    # From the cache, with no request, until --refresh.
    run_cli("models", "-p", "groq", env=groq_env(server))
    assert len(server.requests) == 1
    run_cli("models", "-p", "groq", "--refresh", env=groq_env(server))
    assert len(server.requests) == 2


def test_models_marks_free_openrouter_models(server: ProviderServer) -> None:
    listing = {
        "data": [
            {
                "id": "vendor/paid",
                "name": "Paid",
                "pricing": {"prompt": "0.000001", "completion": "0.000002"},
            },
            {"id": "vendor/zero", "name": "Zero", "pricing": {"prompt": "0", "completion": "0"}},
        ]
    }
    server.reply_with(
        Reply(headers={"content-type": "application/json"}, steps=[json.dumps(listing).encode()])
    )
    env = {"BYOK_TUI_OPENROUTER_BASE_URL": f"{server.base_url}/api/v1"}  # no key: public list
    result = run_cli("models", "-p", "openrouter", env=env)
    assert result.returncode == 0, result.stderr
    zero = next(line for line in result.stdout.splitlines() if "vendor/zero" in line)
    paid = next(line for line in result.stdout.splitlines() if "vendor/paid" in line)
    assert "free" in zero
    assert "free" not in paid
    assert server.requests[0].header("authorization") is None


def test_models_refresh_failure_is_reported_and_registry_models_still_listed(
    server: ProviderServer,
) -> None:
    server.reply_with(Reply(500, {"content-type": "application/json"}, [b"{}"]))
    result = run_cli("models", "-p", "groq", "--refresh", env=groq_env(server))
    assert result.returncode == 1
    assert "500" in result.stderr
    assert "llama-3.3-70b-versatile" in result.stdout


def test_models_without_refresh_exits_non_zero_when_discovery_fails(
    server: ProviderServer,
) -> None:
    """No cache yet, so `models` asks the provider; a bad key is a failure, --refresh or not."""
    server.reply_with(
        Reply(401, {"content-type": "application/json"}, [b'{"error":{"message":"bad key"}}'])
    )
    result = run_cli("models", "-p", "groq", env=groq_env(server))
    assert result.returncode == 1
    assert "401 Invalid API key" in result.stderr
    assert "llama-3.3-70b-versatile" in result.stdout  # the registry's models still listed


def test_models_of_every_provider_succeeds_when_ollama_is_not_running_and_says_so(
    server: ProviderServer,
) -> None:
    """Ollama not running is how most machines are: listing every provider notes it and
    succeeds; asking for Ollama alone fails."""
    server.reply_with(Reply(headers={"content-type": "application/json"}, steps=[b'{"data": []}']))
    env = {
        "BYOK_TUI_OPENROUTER_BASE_URL": f"{server.base_url}/api/v1",  # public list, no key
        "OLLAMA_HOST": "127.0.0.1:9",  # nothing listens there
    }
    every = run_cli("models", "--refresh", env=env)
    assert every.returncode == 0, every.stderr
    assert "Ollama is not running" in every.stderr
    alone = run_cli("models", "-p", "ollama", env=env)
    assert alone.returncode == 1
    assert "ollama serve" in alone.stderr


def test_a_reply_the_terminals_encoding_cannot_hold_is_printed_not_a_crash() -> None:
    """PYTHONIOENCODING=cp1252 (a Windows console, an old locale): the emoji becomes '?',
    the exit status says the reply completed, and no traceback is printed."""
    from tests.support.provider_server import openai_reply, provider_server

    run_cli("keys", "set", "openai", stdin="sk-proj-" + "C" * 60)
    with provider_server() as server:
        server.reply_with(openai_reply("Done \U0001f389 café"))
        env = {"BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1", "PYTHONIOENCODING": "cp1252"}
        result = run_cli("ask", "-p", "openai", "hi", env=env, encoding="cp1252")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout.strip() == "Done ? café"


def test_an_error_whose_message_has_new_lines_is_printed_on_one_line() -> None:
    """A gateway's 429 with a multi-line message: still one line on standard error."""
    from tests.support.provider_server import provider_server

    run_cli("keys", "set", "openai", stdin="sk-proj-" + "C" * 60)
    body = json.dumps({"error": {"message": "Too many requests.\n\nSlow down,\r\n\tplease."}})
    with provider_server() as server:
        server.reply_with(Reply(429, {"content-type": "application/json"}, [body.encode()]))
        env = {"BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1"}
        result = run_cli("ask", "-p", "openai", "hi", env=env)
        models = run_cli("models", "--refresh", "-p", "openai", env=env)
    assert result.returncode == 5
    for stderr in (result.stderr, models.stderr):
        assert len(stderr.strip().splitlines()) == 1, stderr
        assert "Too many requests. Slow down, please." in stderr
