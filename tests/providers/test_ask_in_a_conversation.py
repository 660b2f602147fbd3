"""Multi-turn from the shell, as `llm -c`: `ask -c` adds to the bot's last conversation with
its history sent; `ask --conversation ID` to a chosen one; `byok-tui conversations` lists the
ids, and an id that does not exist points there."""

from __future__ import annotations

from tests.support.cli import run_cli
from tests.support.provider_server import ProviderServer, openai_reply

KEY = "gsk_" + "C" * 52


def groq(server: ProviderServer) -> dict[str, str]:
    return {"BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1", "GROQ_API_KEY": KEY}


def sent_texts(server: ProviderServer, n: int) -> list[str]:
    return [m["content"] for m in server.requests[n].json["messages"] if m["role"] != "system"]


def test_ask_c_carries_on_the_last_conversation_with_its_history(server: ProviderServer) -> None:
    server.reply_with(openai_reply("Paris."), openai_reply("About 2 million."), openai_reply("x"))
    assert run_cli("ask", "-p", "groq", "Capital of France?", env=groq(server)).returncode == 0
    carried = run_cli("ask", "-c", "How many people live there?", env=groq(server))
    assert carried.returncode == 0, carried.stderr
    assert carried.stdout == "About 2 million.\n"
    assert sent_texts(server, 1) == [
        "Capital of France?",
        "Paris.",
        "How many people live there?",
    ]
    fresh = run_cli("ask", "-p", "groq", "Unrelated", env=groq(server))
    assert fresh.returncode == 0
    assert sent_texts(server, 2) == ["Unrelated"]  # without -c: a conversation of its own


def test_conversations_lists_ids_and_ask_conversation_adds_to_one(server: ProviderServer) -> None:
    server.reply_with(openai_reply("One."), openai_reply("Two."), openai_reply("Again."))
    assert run_cli("ask", "-p", "groq", "first topic", env=groq(server)).returncode == 0
    assert run_cli("ask", "-p", "groq", "second topic", env=groq(server)).returncode == 0
    listed = run_cli("conversations").stdout.splitlines()
    assert [line.split("\t")[3] for line in listed] == ["second topic", "first topic"]
    first_id = listed[1].split("\t")[0].removeprefix("#")
    again = run_cli("ask", "--conversation", first_id, "-p", "groq", "more", env=groq(server))
    assert again.returncode == 0, again.stderr
    assert sent_texts(server, 2) == ["first topic", "One.", "more"]


def test_an_unknown_conversation_id_points_to_the_list() -> None:
    result = run_cli("export", "--markdown", "--conversation", "99")
    assert result.returncode != 0
    assert "`byok-tui conversations` lists them" in result.stderr
    asked = run_cli("ask", "--conversation", "99", "hi")
    assert asked.returncode != 0 and "byok-tui conversations" in asked.stderr
    assert "no conversation yet" in run_cli("ask", "-c", "hi").stderr
