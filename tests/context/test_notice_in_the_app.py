"""In the app: a message sent in a conversation longer than the model's context carries the
newest turns that fit, and the transcript says, above the reply, how many were sent of how
many. `ask --continue` says the same on standard error."""

from __future__ import annotations

from textual.widgets import Static

from byok_tui.app_services.services import model_cache, open_services, open_store
from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.providers.types import ListedModel, Role
from byok_tui.widgets.message_views import ReplyView
from byok_tui.widgets.transcript import Transcript
from tests.support.cli import run_cli
from tests.support.fake_backend import FakeProviders
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    app_answered_by,
    chat,
    replies,
    send,
    settle,
    wait_for,
    workers_done,
)
from tests.support.provider_server import ProviderServer, openai_reply

KEY = "sk-proj-" + "C" * 60
WORDS = "word " * 79 + "end"  # 104 tokens by the estimate
MODEL = "gpt-small-window"  # not in the registry: its context comes from the model list


def a_long_conversation(messages: int, *, partial_last: bool = False) -> None:
    services = open_services()
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    # 4,096 tokens kept for the reply: 85 % of the other 1,900 is fifteen 104-token turns.
    model_cache(services).put("openai", [ListedModel(MODEL, MODEL, context_length=5_996)])
    store = open_store(services)
    bot = store.default_bot("openai", MODEL)
    conversation = store.create_conversation(bot.id, "long")
    for number in range(messages):
        role: Role = "user" if number % 2 == 0 else "assistant"
        store.add_message(conversation.id, role, f"{number}: {WORDS}")
    if partial_last:
        reply = store.add_message(
            conversation.id, "assistant", "", status="partial", provider="openai", model=MODEL
        )
        store.save_reply(reply.id, content="Half", reasoning="", status="partial")


async def send_in_the_app(messages: int) -> tuple[list[str], int]:
    """In a conversation of `messages`, send one more: the notices the transcript shows
    (each checked to sit just above the reply), and how many turns were sent."""
    a_long_conversation(messages)
    fake = FakeProviders()
    fake.enqueue("the answer")
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "the question")
        await wait_for(pilot, lambda: replies(app)[-1:] == ["the answer"])
        await workers_done(app)  # the send has ended: what it had to say is said
        await pilot.pause()
        transcript = chat(app).query_one(Transcript)
        children = list(transcript.children)
        reply = children.index(transcript.query(ReplyView).last())
        notices = list(transcript.query(".notice").results(Static))
        assert all(children.index(n) + 1 == reply for n in notices)
        return [str(n.render()) for n in notices], len(fake.requests[0].texts)


async def test_the_transcript_says_above_the_reply_how_many_messages_were_sent() -> None:
    notices, sent = await send_in_the_app(300)
    assert notices == [
        "sent the last 15 of 301 messages: the rest does not fit "
        "gpt-small-window's context (5,996 tokens)"
    ]
    assert sent == 15


async def test_no_notice_when_the_whole_conversation_fits() -> None:
    assert await send_in_the_app(4) == ([], 5)


def test_ask_continue_says_on_standard_error_what_was_left_out(server: ProviderServer) -> None:
    a_long_conversation(300, partial_last=True)
    server.reply_with(openai_reply(" and the rest."))
    done = run_cli("ask", "--continue", env={"BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1"})
    assert done.returncode == 0, done.stderr
    assert "messages: the rest does not fit gpt-small-window's context (5,996 tokens)" in (
        done.stderr
    )
    sent = server.requests[0].json["messages"]
    assert sent[-2] == {"role": "assistant", "content": "Half"}
    assert len(sent) < 20 and sent[0]["role"] == "user"
