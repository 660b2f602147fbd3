"""A reply that called tools, in what later requests carry: its rounds go again as the turns
they were (the model's call, what went back, then its answer) while the bot offers tools;
as its words alone to a request that offers none (a family refuses tool turns without tool
definitions); and a reply cut after a round is continued with its rounds before it and the
tools offered again. Stored rounds read back exactly, however the words fell."""

from __future__ import annotations

import json
from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from byok_tui.chat.reply_recorder import ReplyRecorder
from byok_tui.chat.tool_history import reply_turns, without_tool_turns
from byok_tui.core.paths import app_paths
from byok_tui.providers.types import ChatMessage, TextDelta, ToolCall, ToolResult
from byok_tui.storage.store import Store
from tests.support.cli import run_cli
from tests.support.provider_server import ProviderServer, Reply, Seen, provider_server, sse
from tests.tools.test_ask_with_tools import calls_weather, ready

TOLD = "Told: Oslo: snow for 1 day(s), -4 C."


@dataclass
class _Reply:
    """What a ReplyRecorder needs of a stored reply."""

    id: int = 1
    content: str = ""
    provider: str = "groq"
    model: str = "m"
    reasoning: str = ""
    cost_usd: float | None = None


class _Store:
    def save_reply(self, *_args: object, **_kwargs: object) -> None:
        pass


words = st.text(alphabet=st.sampled_from("ab \n"), max_size=6)


@given(st.lists(words, min_size=1, max_size=4), words)
def test_stored_rounds_read_back_as_the_turns_they_were(rounds: list[str], answer: str) -> None:
    """Whatever each round said (empty, ending a line or not), the stored reply reads back
    as each round's words with its call and result, then the answer."""
    recorder = ReplyRecorder(_Store(), _Reply())  # type: ignore[arg-type]
    for number, said in enumerate(rounds):
        if said:
            recorder.add(TextDelta(said))
        call = ToolCall(f"c{number}", "t", "{}", {})
        recorder.next_round((call,), (ToolResult(f"c{number}", "t", f"r{number}"),))
    if answer:
        recorder.add(TextDelta(answer))
    turns = reply_turns("".join(recorder.text), recorder.tool_turns)
    assert turns is not None, "a stored reply's rounds did not read back"
    assert [t.content for t in turns[:-1:2]] == rounds
    assert [t.tool_results[0].content for t in turns[1::2]] == [f"r{n}" for n in range(len(rounds))]
    assert turns[-1].content == answer


def test_rounds_that_do_not_match_the_text_are_not_read_as_turns() -> None:
    rounds = [{"said": "not this", "calls": [{"id": "1", "name": "t"}], "results": []}]
    assert reply_turns("Something else", rounds) is None
    assert reply_turns("x", [{"said": "x"}]) is None  # a round without its calls


def test_without_tools_a_reply_is_its_words_in_one_turn() -> None:
    call = ToolCall("c", "t", "{}", {})
    turns = (
        ChatMessage("user", "Weather?"),
        ChatMessage("assistant", "Looking.", tool_calls=(call,)),
        ChatMessage("user", "", tool_results=(ToolResult("c", "t", "snow"),)),
        ChatMessage("assistant", "Snow."),
        ChatMessage("user", "Thanks"),
    )
    assert without_tool_turns(turns) == (
        ChatMessage("user", "Weather?"),
        ChatMessage("assistant", "Looking.\n\nSnow."),
        ChatMessage("user", "Thanks"),
    )


def later_ask(server: ProviderServer, *extra: str) -> dict[str, object]:
    """`ask -c` in the same conversation, and the request it made."""
    env = {"BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1"}
    before = len(server.requests)
    done = run_cli("ask", "-c", *extra, "And tomorrow?", env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    request = server.requests[before].json
    assert isinstance(request, dict)
    return request


def first_ask(server: ProviderServer) -> None:
    env = {"BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1"}
    done = run_cli(
        "ask",
        "-p",
        "groq",
        "--allow-tool",
        "test:weather",
        "Weather in Oslo?",
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert len(server.requests) == 2


def test_a_later_message_carries_the_earlier_rounds_while_tools_are_offered() -> None:
    ready()
    with provider_server(calls_weather) as server:
        first_ask(server)
        request = later_ask(server, "--allow-tool", "test:weather")
    messages = request["messages"]
    assert isinstance(messages, list)
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant", "tool", "assistant", "user"], roles
    asked, result, answer = messages[1], messages[2], messages[3]
    assert asked["content"] == "Looking. "
    assert asked["tool_calls"][0]["function"] == {
        "name": "test_weather",
        "arguments": '{"city": "Oslo"}',
    }
    assert result == {
        "role": "tool",
        "tool_call_id": asked["tool_calls"][0]["id"],
        "content": "Oslo: snow for 1 day(s), -4 C.",
    }
    assert answer == {"role": "assistant", "content": TOLD}
    assert request["tools"], "the bot's tools were not offered again"


def test_a_bot_without_tools_sends_the_earlier_reply_as_its_words_only() -> None:
    ready()
    with provider_server(calls_weather) as server:
        first_ask(server)
        assert run_cli("bot", "tools", "Default", "--clear").returncode == 0
        request = later_ask(server)
    assert "tools" not in request
    messages = request["messages"]
    assert isinstance(messages, list)
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == f"Looking. \n\n{TOLD}"
    assert "tool_calls" not in json.dumps(messages)


def test_a_reply_cut_after_a_round_is_continued_with_its_rounds_and_its_tools() -> None:
    """The answer after the tool's result broke off; --continue sends the round as it was,
    the words so far as the reply to continue, and offers the tools again; the rounds stay
    stored with the reply."""

    def cut_after_the_round(seen: Seen) -> Reply:
        messages = seen.json["messages"]
        if messages[-1]["role"] == "tool":
            half = {"choices": [{"index": 0, "delta": {"content": "Snow, it"}}]}
            return Reply(steps=sse(half), abort=True)
        if len(messages) > 1 and messages[-2]["role"] == "assistant":
            rest = {"choices": [{"index": 0, "delta": {"content": " says."}}]}
            end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
            return Reply(steps=sse(rest, end, done=True))
        return calls_weather(seen)

    ready()
    with provider_server(cut_after_the_round) as server:
        env = {"BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1"}
        cut = run_cli(
            "ask", "-p", "groq", "--allow-tool", "test:weather", "Weather?", env=env, timeout=120
        )
        assert cut.returncode != 0
        done = run_cli("ask", "--continue", "--allow-tool", "test:weather", env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        request = server.requests[-1].json
    messages = request["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant", "user"]
    assert messages[1]["tool_calls"][0]["function"]["name"] == "test_weather"
    assert messages[3]["content"] == "Snow, it"  # the reply to continue, after its round
    assert request["tools"], "a continued reply was offered no tools"
    store = Store(app_paths().data_dir / "byok-tui.sqlite3")
    bot = store.bot("Default")
    reply = store.messages(store.conversations(bot.id)[0].id)[-1]
    assert reply.status == "complete"
    assert reply.content == "Looking. \n\nSnow, it says."
    assert store.tool_turns_of(reply.id)[0]["said"] == "Looking. "
