"""What a send yields, relayed to the conversation column as it arrives.

The column's send worker hands each event of the data service's send here: the reply's text
goes into its ReplyStream; its row, a key failover, older messages left out and the price go
to the column as its messages (screens/chat_messages.py), for its handlers to show. Never
touches a widget. Keeps the keyboard answering: a burst of events is relayed a slice at a
time, and the first words go on screen before anything else is parsed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from textual.message import Message

from byok_tui.app_services.tool_box import shown_arguments
from byok_tui.chat.history import HistoryTrimmed
from byok_tui.chat.key_failover import KeyFailedOver
from byok_tui.chat.outgoing import ToolNotice, ToolRan, ToolRoundsSpent
from byok_tui.chat.reply_events import ReplyEvent, ReplyStarted
from byok_tui.chat.reply_recorder import ReplyPriced
from byok_tui.providers.types import Done, ReasoningDelta, StreamEvent, TextDelta, Usage
from byok_tui.screens.chat_messages import (
    HistoryNotice,
    KeyNotice,
    ReplyBilled,
    ReplyOpened,
    ToolShown,
)
from byok_tui.spend.pricing import usage_line
from byok_tui.widgets.message_views import reply_meta
from byok_tui.widgets.reply_stream import ReplyStream

YIELD_SECONDS = 0.012  # longest the relay runs before letting the UI have a turn
YIELD_TURNS = 10  # and how many turns: enough for a chain of messages to run, never idle
FIRST_WORDS_WAIT = 0.05  # longest the relay waits for a reply's first words to be drawn


class ReplyRelay:
    def __init__(
        self,
        stream: ReplyStream,
        *,
        post: Callable[[Message], object],
        echo: Callable[[], None],
        forward: Callable[[ReplyStream, StreamEvent], None],
        continuing: bool,
    ) -> None:
        """`post`: the column's post_message; `echo`: draws the message sent, once its request
        is on the wire; `forward`: hands a stream event to the column, for `stream` (text,
        pacing, the end); `continuing`: the reply continues a stored one."""
        self._stream = stream
        self._post, self._echo, self._forward = post, echo, forward
        self._continuing = continuing
        self._unopened: list[ReplyOpened] = []  # the reply's meta line, until it is shown
        self._meta: tuple[str | None, str | None, str, bool] = (None, None, "", False)
        self._ids: tuple[int | None, int | None, str | None] = (None, None, None)
        self._first_words = True
        self._slice_started = time.perf_counter()
        self.arrived = False  # any text: a fallback is never asked after that
        self._words_in_round = False  # text since the last tool call (or the start)
        self.ended = False  # the reply's end came: stopping after it stops no part of it
        self._loop_turned = True  # since the last event: the loop has run what was waiting

    def _note_loop_turned(self) -> None:
        self._loop_turned = True

    def sent(self) -> None:
        """The request is on the wire: the message, then the reply's row, are shown. Called
        from inside the HTTP client, which reads the reply only once this returns: drawing
        the message here held the reply's first bytes back (~3 ms), so it is drawn at the
        loop's next turn, still before the row (a message posted is handled after it)."""
        asyncio.get_running_loop().call_soon(self._echo)
        if self._unopened:
            self._post(self._unopened.pop())

    def _show_sent(self) -> None:
        self._echo()
        if self._unopened:
            self._post(self._unopened.pop())

    async def relay(self, event: ReplyEvent) -> None:
        if self._loop_turned:
            # The stream waited for the network and the loop had its turns meanwhile (at a
            # model's pace, between every two tokens): a slice starts afresh. Yielding anyway
            # spun the loop ten times every third token (6,630 idle turns in a paced
            # 2,000-token reply).
            self._slice_started = time.perf_counter()
        elif time.perf_counter() - self._slice_started > YIELD_SECONDS:
            # A fast server delivers thousands of events in a few reads; parsing them all at
            # once would freeze the keyboard, so give the loop a turn.
            for _turn in range(YIELD_TURNS):
                await asyncio.sleep(0)
            self._slice_started = time.perf_counter()
        if self._loop_turned:
            self._loop_turned = False
            asyncio.get_running_loop().call_soon(self._note_loop_turned)
        if isinstance(event, ReplyStarted):
            reply = event.message
            self._meta = (reply.provider, reply.model, event.key.source_text, reply.fallback)
            continued = reply.content if self._continuing else None
            self._ids = (reply.id, reply.parent_id, continued)
            self._unopened.append(ReplyOpened(reply_meta(*self._meta), *self._ids))
            if event.key.warning:  # its command printed a key of another provider's shape
                self._post(KeyNotice(event.key.warning, title="Key"))
        elif isinstance(event, KeyFailedOver):
            # The reply is answered with another key: its line names that key.
            self._meta = (*self._meta[:2], event.key.source_text, self._meta[3])
            self._unopened[:] = [ReplyOpened(reply_meta(*self._meta), *self._ids)]
            self._post(KeyNotice(event.notice))
        elif isinstance(event, HistoryTrimmed):
            self._post(HistoryNotice(event.notice))
        elif isinstance(event, ReplyPriced):
            usage, cost = event.usage or Usage(), event.cost
            line = usage_line(usage.input_tokens, usage.output_tokens, cost.usd, priced=True)
            self._post(ReplyBilled(line, event.added_usd))
        elif isinstance(event, ToolRan):
            if self._words_in_round:
                # The next round's words begin a paragraph of their own, as it is stored.
                self._words_in_round = False
                self._forward(self._stream, TextDelta("\n\n"))
            result = event.result
            arguments = shown_arguments(event.call)
            self._post(ToolShown(event.call.name, arguments, result.content, result.is_error))
        elif isinstance(event, ToolRoundsSpent):
            self._post(
                HistoryNotice(
                    f"The model asked for tools again after {event.rounds} rounds: the reply "
                    "stops there (what it wrote is kept)."
                )
            )
        elif isinstance(event, ToolNotice):
            self._post(HistoryNotice(event.text))
        else:
            self._show_sent()  # a no-op unless the request was never reported as sent
            words = isinstance(event, TextDelta | ReasoningDelta)
            self.arrived = self.arrived or words
            self._words_in_round = self._words_in_round or isinstance(event, TextDelta)
            self.ended = self.ended or isinstance(event, Done)
            self._forward(self._stream, event)
            if self._first_words and words:
                # The first words go on screen before anything else is parsed.
                self._first_words = False
                await self._stream.first_words_drawn(FIRST_WORDS_WAIT)
                self._slice_started = time.perf_counter()
