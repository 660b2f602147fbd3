"""What a send yields reaches the conversation column in order: the reply's row once the
request is on the wire (with the key that answered, after a failover), the text into the reply
in progress, notices and the price as the column's messages."""

from __future__ import annotations

import asyncio
from typing import Any

from byok_tui.chat.history import HistoryTrimmed
from byok_tui.chat.key_failover import KeyFailedOver
from byok_tui.chat.reply_events import ReplyStarted
from byok_tui.chat.reply_recorder import ReplyPriced
from byok_tui.core.records import Cost, KeySource, Message
from byok_tui.keys.resolve import ResolvedKey
from byok_tui.providers.types import Done, StreamEvent, TextDelta, Usage
from byok_tui.screens.chat_messages import HistoryNotice, KeyNotice, ReplyBilled, ReplyOpened
from byok_tui.screens.reply_relay import ReplyRelay

DEFAULT = ResolvedKey("sk-test-default", KeySource.GLOBAL, "app-apikey-openai")
WORK = ResolvedKey("sk-test-work", KeySource.LABELLED, "app-apikey-openai-work", label="work")


class FirstWordsAtOnce:
    """A ReplyStream whose first words are drawn as soon as asked."""

    async def first_words_drawn(self, timeout: float) -> None:
        return None


def reply_row(content: str = "") -> Message:
    return Message(
        7, "u", 1, "assistant", content, "", "openai", "gpt-5.4-mini", "global", "partial",
        None, None, None, None, 0.0, parent_id=6,
    )  # fmt: skip


def relay_of(continuing: bool = False) -> tuple[ReplyRelay, list[Any], list[StreamEvent]]:
    posted: list[Any] = []
    forwarded: list[StreamEvent] = []
    relay = ReplyRelay(
        FirstWordsAtOnce(),  # type: ignore[arg-type]
        # As Textual's: a message posted is handled at a later turn of the loop.
        post=lambda message: asyncio.get_running_loop().call_soon(posted.append, message),
        echo=lambda: posted.append("echo"),
        forward=lambda _stream, event: forwarded.append(event),
        continuing=continuing,
    )
    return relay, posted, forwarded


def test_the_reply_row_is_shown_once_the_request_is_on_the_wire_then_the_text() -> None:
    relay, posted, forwarded = relay_of()

    async def run() -> None:
        await relay.relay(ReplyStarted(reply_row(), DEFAULT))
        await asyncio.sleep(0)
        assert posted == [], "not before the request is on the wire"
        relay.sent()
        await asyncio.sleep(0)  # the HTTP client waits for the reply
        await relay.relay(TextDelta("Hello"))
        await relay.relay(Done("stop"))

    asyncio.run(run())
    # The message sent is drawn first (echo is a no-op once it is), then the reply's row, once.
    assert posted[:2] == ["echo", ReplyOpened("openai · gpt-5.4-mini · global key", 7, 6)]
    assert set(posted[2:]) == {"echo"}
    assert [type(event) for event in forwarded] == [TextDelta, Done]
    assert relay.arrived


def test_the_message_is_shown_once_the_http_client_has_gone_back_to_reading() -> None:
    """`sent` is called from inside the HTTP client, which reads the reply only once it
    returns: drawing the message there held the reply's first bytes back (~3 ms a send).
    The message is drawn at the loop's next turn, before the reply's row."""
    relay, posted, _forwarded = relay_of()

    async def run() -> None:
        await relay.relay(ReplyStarted(reply_row(), DEFAULT))
        relay.sent()
        assert posted == [], "the message was drawn inside the HTTP client's call"
        await asyncio.sleep(0)
        assert posted == ["echo", ReplyOpened("openai · gpt-5.4-mini · global key", 7, 6)]

    asyncio.run(run())


def test_after_a_failover_the_row_names_the_key_that_answered() -> None:
    relay, posted, _ = relay_of()

    async def run() -> None:
        await relay.relay(ReplyStarted(reply_row(), DEFAULT))
        await relay.relay(KeyFailedOver("The default key was refused: trying key work", WORK))
        await asyncio.sleep(0)  # the next request goes out, and its reply comes
        await relay.relay(TextDelta("Hi"))

    asyncio.run(run())
    notice, _echo, opened = posted[:3]
    assert notice == KeyNotice("The default key was refused: trying key work")
    assert opened == ReplyOpened("openai · gpt-5.4-mini · key work", 7, 6)
    assert "sk-test" not in repr(posted)


def test_a_continued_reply_brings_its_text_so_far_and_notices_and_price_pass_on() -> None:
    relay, posted, _ = relay_of(continuing=True)
    trimmed = HistoryTrimmed(sent=40, total=100, model="gpt-5.4-mini", context_tokens=400_000)

    async def run() -> None:
        await relay.relay(ReplyStarted(reply_row("Once upon"), DEFAULT))
        relay.sent()
        await relay.relay(trimmed)
        await relay.relay(ReplyPriced(Usage(10, 20), Cost(0.25, ""), 0.25))

    asyncio.run(run())
    assert posted[1] == ReplyOpened("openai · gpt-5.4-mini · global key", 7, 6, "Once upon")
    assert posted[2] == HistoryNotice(trimmed.notice)
    assert isinstance(posted[3], ReplyBilled) and posted[3].cost_usd == 0.25
    assert not relay.arrived, "no text arrived: a fallback may still answer"


def relay_turns_given(monkeypatch: Any, run: Any) -> int:
    """How many turns the relay itself handed the event loop (its `asyncio.sleep(0)`s)."""
    turns = 0
    real_sleep = asyncio.sleep

    async def counting_sleep(delay: float, *args: Any) -> Any:
        nonlocal turns
        if delay == 0:
            turns += 1
        return await real_sleep(delay, *args)

    monkeypatch.setattr(asyncio, "sleep", counting_sleep)
    asyncio.run(run())
    return turns


def test_a_reply_at_a_models_pace_costs_the_loop_no_extra_turns(monkeypatch: Any) -> None:
    """Between two tokens of a paced reply the relay waits for the network, and the loop has
    its turns then: yielding again spun the loop ten times every few tokens (a third of the
    app's CPU on a paced 2,000-token reply)."""
    relay, _, forwarded = relay_of()

    async def run() -> None:
        await relay.relay(ReplyStarted(reply_row(), DEFAULT))
        for _ in range(40):
            await asyncio.sleep(0.005)  # the next token is on its way
            await relay.relay(TextDelta("word "))

    assert relay_turns_given(monkeypatch, run) == 0
    assert len(forwarded) == 40


def test_a_burst_of_events_still_gives_the_keyboard_its_turns(monkeypatch: Any) -> None:
    """Events arriving faster than they are handled: the relay hands the loop turns, so that
    keys typed meanwhile are answered."""
    import time

    def slow_forward(_stream: object, _event: StreamEvent) -> None:
        started = time.perf_counter()
        while time.perf_counter() - started < 0.0005:  # the work of drawing a token
            pass

    relay, _, _ = relay_of()
    relay._forward = slow_forward

    async def run() -> None:
        await relay.relay(ReplyStarted(reply_row(), DEFAULT))
        for _ in range(100):  # 50 ms of work, none of it waiting
            await relay.relay(TextDelta("word "))

    assert relay_turns_given(monkeypatch, run) >= 10


def test_a_replys_line_says_each_key_source_once_in_words() -> None:
    from byok_tui.widgets.message_views import reply_meta

    said = {
        "global": "global key",
        "per-bot": "per-bot key",
        "key personal": "key personal",
        "global from command sh": "global key from command sh",
        "key work from command op": "key work from command op",
        "environment": "key from the environment",
        "local runtime": "local runtime",
        "no key": "no key",
    }
    for source, words in said.items():
        assert reply_meta("openai", "m", source) == f"openai · m · {words}", source
