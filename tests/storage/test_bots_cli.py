"""Per-bot keys from the command line, used by `ask --bot` and by nothing else."""

from __future__ import annotations

from byok_tui.core.paths import app_paths
from byok_tui.storage.store import Store
from tests.support.cli import run_cli
from tests.support.provider_server import Reply, provider_server, sse

GLOBAL = "gsk_GLOBAL" + "g" * 46
PER_BOT = "gsk_PERBOT" + "p" * 46
DONE = sse(
    {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}, done=True
)


def test_a_per_bot_key_is_used_for_that_bot_only_and_clearing_falls_back() -> None:
    assert run_cli("keys", "set", "groq", stdin=GLOBAL).returncode == 0
    assert run_cli("bot", "add", "Fast", "-p", "groq").returncode == 0
    assert run_cli("bot", "add", "Plain", "-p", "groq").returncode == 0
    result = run_cli("bot", "key", "Fast", stdin=PER_BOT + "\n")
    assert result.returncode == 0, result.stderr
    assert PER_BOT not in result.stdout + result.stderr
    with provider_server() as server:
        server.reply_with(Reply(steps=DONE))
        env = {"BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1"}
        assert run_cli("ask", "--bot", "Fast", "hi", env=env).returncode == 0
        assert run_cli("ask", "--bot", "Plain", "hi", env=env).returncode == 0
        assert run_cli("bot", "key", "Fast", "--clear").returncode == 0
        assert run_cli("ask", "--bot", "Fast", "hi", env=env).returncode == 0
        seen = [r.header("authorization") for r in server.requests]
    assert seen == [f"Bearer {PER_BOT}", f"Bearer {GLOBAL}", f"Bearer {GLOBAL}"]


def test_a_per_bot_key_is_never_sent_to_another_provider() -> None:
    run_cli("bot", "add", "Fast", "-p", "groq")
    run_cli("bot", "key", "Fast", stdin=PER_BOT)
    with provider_server() as server:
        server.reply_with(Reply(steps=DONE))
        env = {
            "BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1",
            "OPENAI_API_KEY": "sk-proj-" + "o" * 60,
        }
        result = run_cli("ask", "--bot", "Fast", "-p", "openai", "hi", env=env)
        assert result.returncode == 0, result.stderr
        assert server.requests[0].header("authorization") == "Bearer sk-proj-" + "o" * 60


def test_ask_saves_the_exchange_under_the_bot() -> None:
    run_cli("bot", "add", "Fast", "-p", "groq", "--system", "Be terse.")
    with provider_server() as server:
        server.reply_with(Reply(steps=DONE))
        env = {"BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1", "GROQ_API_KEY": GLOBAL}
        assert run_cli("ask", "--bot", "Fast", "What is SSE?", env=env).returncode == 0
        assert server.requests[0].json["messages"][0] == {"role": "system", "content": "Be terse."}
    store = Store(app_paths().data_dir / "byok-tui.sqlite3")
    bot = store.bot("Fast")
    [conversation] = store.conversations(bot.id)
    assert conversation.title == "What is SSE?"
    assert [(m.role, m.content, m.status) for m in store.messages(conversation.id)] == [
        ("user", "What is SSE?", "complete"),
        ("assistant", "ok", "complete"),
    ]


def test_an_unknown_bot_is_a_clear_error() -> None:
    result = run_cli("ask", "--bot", "Nobody", "hi")
    assert result.returncode == 2
    assert "no bot named 'Nobody'" in result.stderr
    assert "bot list" in result.stderr


def test_a_local_runtime_bot_takes_no_per_bot_key_and_says_so() -> None:
    assert run_cli("bot", "add", "Local", "-p", "ollama").returncode == 0
    refused = run_cli("bot", "key", "Local", stdin="some-key-value-123456\n")
    assert refused.returncode == 2
    assert "takes no key" in refused.stderr
    listed = run_cli("bot", "list").stdout
    row = next(line for line in listed.splitlines() if line.startswith("Local"))
    assert row.split()[-3:-1] == ["local", "runtime"]


def test_bot_list_shows_each_bots_fallbacks() -> None:
    added = run_cli(
        "bot", "add", "Sturdy", "-p", "openai", "-m", "gpt-5.5",
        "--fallback", "groq:llama-3.3-70b-versatile", "--fallback", "ollama:llama3.2",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    listed = run_cli("bot", "list").stdout
    assert "FALLBACKS" in listed.splitlines()[0]
    (row,) = [line for line in listed.splitlines() if line.startswith("Sturdy")]
    assert row.endswith("groq:llama-3.3-70b-versatile, ollama:llama3.2")
