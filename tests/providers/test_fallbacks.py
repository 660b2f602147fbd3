"""Fallbacks: when the bot's provider cannot answer (429, 402, a 5xx, a time-out, a refused
connection) before any text, the next `provider:model` is asked with that provider's own key;
never after a 400, 401 or 403, nor once text arrived. `byok-tui ask` against two loopback
servers, one playing OpenAI and one Groq."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from byok_tui.core.paths import app_paths
from byok_tui.storage.store import Store
from tests.support.cli import run_cli
from tests.support.provider_server import ProviderServer, Reply, openai_reply, provider_server

OPENAI_KEY = "sk-proj-" + "O" * 50
GROQ_KEY = "gsk_" + "G" * 52
FALLBACK = "groq:llama-3.3-70b-versatile"
JSON = {"content-type": "application/json"}


def refusal(status: int, headers: dict[str, str] | None = None, code: str = "") -> Reply:
    body = json.dumps({"error": {"message": f"refused with {status}", "code": code}}).encode()
    return Reply(status, {**JSON, **(headers or {})}, [body])


@pytest.fixture
def groq() -> Iterator[ProviderServer]:
    with provider_server() as running:
        running.reply_with(openai_reply("from groq"))
        yield running


def environment(openai_url: str, groq: ProviderServer) -> dict[str, str]:
    return {
        "BYOK_TUI_OPENAI_BASE_URL": openai_url,
        "BYOK_TUI_GROQ_BASE_URL": f"{groq.base_url}/openai/v1",
        "OPENAI_API_KEY": OPENAI_KEY,
        "GROQ_API_KEY": GROQ_KEY,
    }


def ask(env: dict[str, str], *extra: str) -> tuple[int, str, str]:
    result = run_cli("ask", "-p", "openai", *extra, "hi", env=env)
    return result.returncode, result.stdout, result.stderr


@pytest.mark.parametrize(
    ("reply", "what"),
    [
        (refusal(429), "openai: rate-limited"),
        (refusal(429, {"retry-after": "30"}), "openai: rate-limited"),
        (refusal(402), "openai: out of credit"),
        (refusal(429, code="insufficient_quota"), "openai: out of credit"),
        (refusal(500), "openai: server error (500)"),
        (refusal(503), "openai: server error (503)"),
    ],
)
def test_a_refusal_another_provider_may_not_share_goes_to_the_fallback(
    server: ProviderServer, groq: ProviderServer, reply: Reply, what: str
) -> None:
    server.reply_with(reply)
    code, out, err = ask(environment(f"{server.base_url}/v1", groq), "--fallback", FALLBACK)
    assert code == 0, err
    assert out == "from groq\n"
    assert f"{what}; trying fallback {FALLBACK}" in err
    assert f"answered by fallback {FALLBACK}" in err
    assert [s.header("authorization") for s in server.requests] == [f"Bearer {OPENAI_KEY}"]
    assert [s.header("authorization") for s in groq.requests] == [f"Bearer {GROQ_KEY}"]
    sent = groq.requests[0].json
    assert sent["model"] == "llama-3.3-70b-versatile"
    assert sent["messages"][-1] == {"role": "user", "content": "hi"}  # sent once, not twice


def test_a_time_out_before_any_text_goes_to_the_fallback(
    server: ProviderServer, groq: ProviderServer
) -> None:
    server.reply_with(Reply(200, steps=[3.0]))
    env = environment(f"{server.base_url}/v1", groq)
    code, out, err = ask(env, "--fallback", FALLBACK, "--timeout", "0.5")
    assert code == 0, err
    assert "openai: timed out; trying fallback" in err and out == "from groq\n"


def test_a_refused_connection_goes_to_the_fallback(groq: ProviderServer) -> None:
    code, out, err = ask(environment("http://127.0.0.1:9/v1", groq), "--fallback", FALLBACK)
    assert code == 0, err
    assert "openai: unreachable; trying fallback" in err and out == "from groq\n"


@pytest.mark.parametrize(("status", "code"), [(400, 8), (401, 4), (403, 4)])
def test_no_fallback_for_a_mistake_the_user_must_mend(
    server: ProviderServer, groq: ProviderServer, status: int, code: int
) -> None:
    server.reply_with(refusal(status))
    got, _out, err = ask(environment(f"{server.base_url}/v1", groq), "--fallback", FALLBACK)
    assert got == code
    assert "fallback" not in err
    assert groq.requests == []


def test_no_fallback_once_text_has_arrived(server: ProviderServer, groq: ProviderServer) -> None:
    server.reply_with(openai_reply("Half an ans", finish=False, pause=3.0))
    env = environment(f"{server.base_url}/v1", groq)
    code, out, _err = ask(env, "--fallback", FALLBACK, "--timeout", "0.5")
    assert code == 6  # timed out mid-reply: what arrived is kept
    assert out == "Half an ans\n"
    assert groq.requests == []


def test_a_short_wait_is_waited_out_and_retried_once_before_the_fallback(
    server: ProviderServer, groq: ProviderServer
) -> None:
    server.reply_with(refusal(429, {"retry-after": "1"}))
    code, out, err = ask(environment(f"{server.base_url}/v1", groq), "--fallback", FALLBACK)
    assert code == 0, err
    assert len(server.requests) == 2
    assert "waiting 1 s, then trying again" in err and out == "from groq\n"


def test_the_exit_status_is_the_last_attempts_and_each_fallback_is_tried_in_order(
    server: ProviderServer, groq: ProviderServer
) -> None:
    server.reply_with(refusal(500))
    groq.reply_with(refusal(401))
    env = environment(f"{server.base_url}/v1", groq)
    code, _out, err = ask(env, "--fallback", FALLBACK, "--fallback", "openai:gpt-5.5")
    assert "openai: server error (500); trying fallback" in err
    assert code == 4  # groq's 401 ends it: never passed on to the next
    assert len(groq.requests) == 1 and len(server.requests) == 1


def test_a_bots_fallbacks_are_used_with_bot_and_its_reply_is_marked(
    server: ProviderServer, groq: ProviderServer
) -> None:
    added = run_cli("bot", "add", "Sturdy", "-p", "openai", "--fallback", FALLBACK)
    assert added.returncode == 0, added.stderr
    assert f"Fallbacks, in order: {FALLBACK}." in added.stdout
    server.reply_with(refusal(429))
    result = run_cli("ask", "--bot", "Sturdy", "hi", env=environment(f"{server.base_url}/v1", groq))
    assert result.returncode == 0, result.stderr
    store = Store(app_paths().data_dir / "byok-tui.sqlite3")
    bot = store.bot("Sturdy")
    assert bot.config.fallbacks == (FALLBACK,)
    (conversation,) = store.conversations(bot.id)
    replies = [m for m in store.messages(conversation.id) if m.role == "assistant"]
    assert [(m.provider, m.status, m.fallback) for m in replies] == [
        ("openai", "error", False),
        ("groq", "complete", True),
    ]
    edited = run_cli("bot", "edit", "Sturdy", "--no-fallbacks")
    assert edited.returncode == 0
    assert store.bot("Sturdy").config.fallbacks == ()


def test_a_malformed_or_unknown_fallback_is_refused_before_anything_is_sent(
    server: ProviderServer, groq: ProviderServer
) -> None:
    env = environment(f"{server.base_url}/v1", groq)
    for fallback, words in (("groq", "is not a fallback"), ("nope:m", "unknown provider")):
        code, _out, err = ask(env, "--fallback", fallback)
        assert code == 2 and words in err
        bad = run_cli("bot", "add", "X", "-p", "openai", "--fallback", fallback)
        assert bad.returncode == 2 and words in bad.stderr
    assert server.requests == [] and groq.requests == []


def test_fallbacks_travel_in_share_links_and_exports_without_a_key(tmp_path: object) -> None:
    assert run_cli("bot", "add", "Sturdy", "-p", "openai", "--fallback", FALLBACK).returncode == 0
    link = run_cli("bot", "share", "Sturdy").stdout.strip()
    assert run_cli("bot", "rm", "Sturdy").returncode == 0
    assert run_cli("bot", "import", link).returncode == 0
    store = Store(app_paths().data_dir / "byok-tui.sqlite3")
    assert store.bot("Sturdy").config.fallbacks == (FALLBACK,)
    exported = json.loads(run_cli("export").stdout)
    (bot,) = [b for b in exported["bots"] if b["name"] == "Sturdy"]
    assert bot["fallbacks"] == [FALLBACK]


def test_key_failover_inside_the_provider_comes_before_a_fallback(
    server: ProviderServer, groq: ProviderServer
) -> None:
    work = "sk-proj-" + "W" * 50
    assert run_cli("keys", "set", "openai", stdin=OPENAI_KEY).returncode == 0
    assert run_cli("keys", "set", "openai", "--label", "work", stdin=work).returncode == 0
    assert run_cli("keys", "failover", "openai", "on").returncode == 0
    server.reply_with(refusal(429))
    env = environment(f"{server.base_url}/v1", groq)
    del env["OPENAI_API_KEY"]
    code, out, err = ask(env, "--fallback", FALLBACK)
    assert code == 0, err
    sent = [s.header("authorization") for s in server.requests]
    assert sent == [f"Bearer {OPENAI_KEY}", f"Bearer {work}"]  # both keys, then the fallback
    assert out == "from groq\n" and len(groq.requests) == 1
