"""`byok-tui ask --continue` as a real subprocess against a loopback server: a reply cut
short, by the network or by the length limit, is continued where it stopped."""

from __future__ import annotations

from byok_tui.app_services.services import open_services, open_store
from tests.support.cli import run_cli
from tests.support.provider_server import ProviderServer, Reply, openai_reply, sse

KEY = "gsk_" + "C" * 52


def groq_env(server: ProviderServer) -> dict[str, str]:
    return {"BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1", "GROQ_API_KEY": KEY}


def test_a_reply_cut_by_the_network_is_continued_by_ask_continue(server: ProviderServer) -> None:
    server.reply_with(
        Reply(steps=sse({"choices": [{"index": 0, "delta": {"content": "Half"}}]}), abort=True),
        openai_reply(" and the rest."),
    )
    cut = run_cli("ask", "-p", "groq", "Tell me", env=groq_env(server))
    assert (cut.returncode, cut.stdout) == (6, "Half\n")

    resumed = run_cli("ask", "--continue", env=groq_env(server))
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == " and the rest.\n", "only what comes next is printed"
    assert "continuing the reply in 'Tell me' (groq llama-3.3-70b-versatile, 4 characters" in (
        resumed.stderr
    )
    sent = server.requests[1].json["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"] == "Half"
    store = open_store(open_services())
    [conversation] = store.conversations(store.bots()[0].id)
    [_question, reply] = store.messages(conversation.id)
    assert (reply.content, reply.status) == ("Half and the rest.", "complete")

    again = run_cli("ask", "--continue", env=groq_env(server))
    assert again.returncode == 2
    assert "has no reply cut short to continue" in again.stderr
    assert len(server.requests) == 2, "nothing sent when there is nothing to continue"


def test_a_reply_at_the_length_limit_exits_6_and_says_how_to_continue(
    server: ProviderServer,
) -> None:
    server.reply_with(openai_reply("Once upon", finish_reason="length"))
    result = run_cli("ask", "-p", "groq", "--max-tokens", "3", "A story", env=groq_env(server))
    assert (result.returncode, result.stdout) == (6, "Once upon\n")
    assert "The reply reached the length limit (3 tokens)" in result.stderr
    assert "ask --continue" in result.stderr


def test_ask_continue_takes_no_prompt_or_model(server: ProviderServer) -> None:
    result = run_cli("ask", "--continue", "-m", "x", "more", env=groq_env(server))
    assert result.returncode == 2
    assert "--continue cannot be combined with a prompt, -m: it continues" in result.stderr
    assert server.requests == []
