"""A reply on its way to the database: accumulated as it streams, written at least once a
second, priced once when it ends. No Textual, no network.

A continued reply keeps what it had: its text grows, and its token counts and cost are those
of every request that wrote it (a budget counts the whole of it).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from byok_tui.chat.tool_history import answer_start
from byok_tui.core.errors import ByokError
from byok_tui.core.records import Cost, Message, MessageStatus
from byok_tui.core.registry import get_provider
from byok_tui.providers.types import (
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolResult,
    Usage,
)
from byok_tui.spend.pricing import cost_of
from byok_tui.storage.store import Store

FLUSH_SECONDS = 1.0
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ReplyPriced:
    """The reply ended with these token counts, and cost this (worked out once, and stored)."""

    usage: Usage | None
    cost: Cost
    # What this request added to the reply's cost: all of it, but for a continued reply,
    # whose earlier part was billed before (None when not known).
    added_usd: float | None = None


def stored_usage(message: Message) -> Usage | None:
    """What a stored reply was billed for so far (None: no counts were reported)."""
    if message.input_tokens is None and message.output_tokens is None:
        return None
    return Usage(
        message.input_tokens,
        message.output_tokens,
        reasoning_tokens=message.reasoning_tokens,
        cached_input_tokens=message.cached_input_tokens,
    )


def _plus(a: int | None, b: int | None) -> int | None:
    return None if a is None and b is None else (a or 0) + (b or 0)


def combined(earlier: Usage | None, later: Usage | None) -> Usage | None:
    """The token counts of two requests that wrote one reply."""
    if earlier is None or later is None:
        return later or earlier
    return Usage(
        _plus(earlier.input_tokens, later.input_tokens),
        _plus(earlier.output_tokens, later.output_tokens),
        reasoning_tokens=_plus(earlier.reasoning_tokens, later.reasoning_tokens),
        cached_input_tokens=_plus(earlier.cached_input_tokens, later.cached_input_tokens),
        cache_write_tokens=_plus(earlier.cache_write_tokens, later.cache_write_tokens),
    )


def cost_of_requests(priced_as: tuple[str, str], usages: list[Usage | None]) -> Cost:
    """What the requests that wrote one reply cost together, each priced on its own (a
    price tiered by prompt length applies to each request, not to their sum). Unknown when
    any part's is: a budget must not count a known part as the whole."""
    costs = [cost_of(*priced_as, usage) for usage in usages]
    if len(costs) == 1 or any(cost.usd is None for cost in costs):
        return next((cost for cost in costs if cost.usd is None), costs[-1])
    return Cost(sum(cost.usd or 0.0 for cost in costs), costs[-1].price)


class ReplyRecorder:
    """Accumulates a streamed reply and writes it to the database at least once a second;
    prices it once, when it ends.

    `continues`: the reply is being continued; it starts from `text` (its stored text, or
    that without the trailing whitespace a prefill may not end with), its stored counts and
    the tool rounds it made before (`tool_turns`, as stored: kept, and followed).
    """

    def __init__(
        self,
        store: Store,
        reply: Message,
        clock: Callable[[], float] = time.monotonic,
        *,
        continues: bool = False,
        text: str | None = None,
        tool_turns: list[dict[str, object]] | None = None,
    ) -> None:
        self._store = store
        self._message_id = reply.id
        self._priced_as = (reply.provider or "", reply.model or "")
        self._clock = clock
        self._last_flush = clock()
        start = reply.content if text is None else text
        self.text: list[str] = [start] if continues and start else []
        rounds_end = answer_start(start, tool_turns) if continues and tool_turns else None
        if rounds_end:  # the rounds' words, then those a next round's turn begins with
            self.text = [start[:rounds_end], start[rounds_end:]]
        self.reasoning: list[str] = [reply.reasoning] if continues and reply.reasoning else []
        self._continues = continues
        self._earlier = stored_usage(reply) if continues else None
        self._earlier_usd = (reply.cost_usd or 0.0) if continues else 0.0
        self.usage: Usage | None = None  # of this request
        self._dirty = False
        # A reply that called tools: each earlier round's counts (a request each, priced on
        # its own), what it asked and what went back, and where its text began.
        self._rounds: list[Usage | None] = []
        self.tool_turns: list[dict[str, object]] = list(tool_turns or []) if continues else []
        self._round_from = 1 if rounds_end else 0

    @property
    def total_usage(self) -> Usage | None:
        """The reply's counts: those of this request, and of those that wrote it before."""
        total = self._earlier
        for usage in (*self._rounds, self.usage):
            total = combined(total, usage)
        return total

    def _usages(self) -> list[Usage | None]:
        """The counts of each request that wrote the reply, to price each on its own."""
        earlier = [self._earlier] if self._continues else []
        return [*earlier, *self._rounds, self.usage]

    def next_round(self, calls: tuple[ToolCall, ...], results: tuple[ToolResult, ...]) -> str:
        """The model called tools and their results go back in a request of its own: keep
        the round's calls, results and counts; the text this round wrote (its turn)."""
        said = "".join(self.text[self._round_from :])
        self.tool_turns.append(
            {
                "said": said,
                "calls": [
                    {
                        "id": c.id,
                        "name": c.name,
                        "arguments": c.raw_arguments,
                        "problem": c.problem,
                        **({"signature": c.signature} if c.signature else {}),
                    }
                    for c in calls
                ],
                "results": [
                    {"id": r.call_id, "name": r.name, "content": r.content, "error": r.is_error}
                    for r in results
                ],
            }
        )
        if self.text and not self.text[-1].endswith("\n"):
            self.text.append("\n\n")  # the next round's words begin a paragraph of their own
        self._round_from = len(self.text)
        self._rounds.append(self.usage)
        self.usage = None
        self._dirty = True
        return said

    def add(self, event: StreamEvent) -> None:
        if isinstance(event, TextDelta):
            self.text.append(event.text)
        elif isinstance(event, ReasoningDelta):
            self.reasoning.append(event.text)
        elif isinstance(event, Usage):
            self.usage = event
        else:
            return
        self._dirty = True
        if self._clock() - self._last_flush >= FLUSH_SECONDS:
            self.flush("partial")

    def save_cost_so_far(self) -> None:
        """Price the rounds so far and save it, so that a budget checked before the next
        round counts them (blocking: run in a worker thread). The final cost replaces it."""
        done = self._usages()[:-1]  # the round now asked for has no counts yet
        self._store.save_cost(self._message_id, cost_of_requests(self._priced_as, done))

    def flush_pending(self) -> None:
        """Save what arrived since the last flush, if anything did."""
        if self._dirty:
            self.flush("partial")

    def flush(
        self,
        status: MessageStatus,
        error_kind: str | None = None,
        error_message: str | None = None,
        *,
        cost: Cost | None = None,
    ) -> None:
        self._last_flush = self._clock()
        self._dirty = False
        self._store.save_reply(
            self._message_id,
            content="".join(self.text),
            reasoning="".join(self.reasoning),
            status=status,
            error_kind=error_kind,
            error_message=error_message,
            usage=self.total_usage,
            cost=cost,
            tool_turns=self.tool_turns or None,
        )

    def finish(
        self, status: MessageStatus, error_kind: str | None = None, error_message: str | None = None
    ) -> None:
        """The reply was cut or stopped: all of it is saved at once. Its cost, when there are
        token counts to price (Anthropic states input tokens first), is worked out in a thread
        of its own and saved after: loading the price data the first time takes ~0.3 s that
        the event loop must not wait for, and a cancelled task cannot await anything."""
        usages = self._usages()
        if all(u is None for u in usages) or not get_provider(self._priced_as[0]).needs_key:
            # Nothing to look up (no counts: not known; the local runtime: $0): at once.
            cost = cost_of_requests(self._priced_as, usages)
            self.flush(status, error_kind, error_message, cost=cost)
            return
        self.flush(status, error_kind, error_message)
        priced_as, store, message_id = self._priced_as, self._store, self._message_id

        def price() -> None:
            try:
                store.save_cost(message_id, cost_of_requests(priced_as, usages))
            except ByokError as error:  # the reply is saved; only its cost is missing
                log.warning("the cost of a cut reply was not saved: %s", error.one_line())

        threading.Thread(target=price, name="price-cut-reply", daemon=True).start()

    async def finish_in_thread(
        self,
        status: MessageStatus,
        error_kind: str | None = None,
        error_message: str | None = None,
    ) -> ReplyPriced:
        """`finish`, with the price worked out in a thread: loading the price data the first
        time takes ~0.3 s, which the event loop must not wait for. The reply is saved first:
        stopped meanwhile, it is kept (without its cost)."""
        self.flush(status, error_kind, error_message)
        cost = await asyncio.to_thread(cost_of_requests, self._priced_as, self._usages())
        self._store.save_cost(self._message_id, cost)
        added = None if cost.usd is None else max(0.0, cost.usd - self._earlier_usd)
        return ReplyPriced(self.total_usage, cost, added)


async def flush_every_second(recorder: ReplyRecorder) -> None:
    while True:
        await asyncio.sleep(FLUSH_SECONDS)
        try:
            recorder.flush_pending()
        except ByokError as error:
            # The reply keeps streaming to the screen; the final save reports the failure.
            log.warning("could not save the reply so far: %s", error.one_line())
