"""Sending a message in a conversation, with nothing lost.

The user's message is stored before the request leaves; the reply is stored as it arrives
(flushed at least once a second) and marked partial until it completes, so a crash, a kill
or a network failure leaves both, with the error stored beside the reply. No Textual here:
the app and `byok-tui ask` both drive this.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import sqlite3
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, replace

from byok_tui.chat.context_window import HistoryReader, ListedContext, SentHistory
from byok_tui.chat.history import ContextRoom, HistoryTrimmed, check_images, continuable
from byok_tui.chat.key_failover import (
    KeyFailedOver,
    KeyOrder,
)
from byok_tui.chat.outgoing import (
    ListTools,
    Outgoing,
    ToolBox,
    ToolNotice,
    ToolRan,
    ToolRoundsSpent,
)
from byok_tui.chat.reply_events import (
    PRE_SEND_ERRORS,
    ReplyEvent,
    ReplyStarted,
    how_it_ended,
)
from byok_tui.chat.reply_recorder import ReplyRecorder, flush_every_second
from byok_tui.chat.send_keys import Ask, SendKeys
from byok_tui.chat.tool_history import reply_turns
from byok_tui.chat.tool_rounds import offered, run_call, with_round, without_tools
from byok_tui.core.attachments import Attachment, check_together
from byok_tui.core.errors import ByokError, ErrorKind
from byok_tui.core.records import Bot, BotConfig, Conversation, Message, MessageStatus
from byok_tui.core.redaction import could_hold_a_key
from byok_tui.core.registry import Provider, UnknownProviderError, get_provider, providers
from byok_tui.keys import ResolvedKey
from byok_tui.providers.client import ProviderClient
from byok_tui.providers.types import (
    ChatMessage,
    ChatRequest,
    Done,
    ToolCall,
    ToolCalls,
    ToolResult,
)
from byok_tui.providers.wire.common import prefills
from byok_tui.spend.budgets import check_budgets
from byok_tui.storage.store import Store

FLUSH_SECONDS = 1.0
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _Ready:
    """A reply about to be asked for: what is sent, to whom, with which keys, and where
    it is stored."""

    provider: Provider
    request: ChatRequest
    key: ResolvedKey
    order: KeyOrder | None
    recorder: ReplyRecorder
    reply: Message
    left_out: ContextRoom | None  # older messages did not fit the model's context
    toolbox: ToolBox | None = None  # tools offered, and who runs the model's calls
    over_budget: bool = False  # the user chose to go over a budget, this once


def _provider(config: BotConfig) -> Provider:
    try:
        return get_provider(config.provider)
    except UnknownProviderError as error:  # one the user defined, removed since
        raise ByokError(str(error), remedy=error.remedy) from None


def _request(
    config: BotConfig, history: tuple[ChatMessage, ...], *, continues: bool = False
) -> ChatRequest:
    return ChatRequest(
        model=config.model,
        messages=history,
        system=config.system_prompt or None,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        continues=continues,
    )


class ConversationService:
    def __init__(
        self, store: Store, client: ProviderClient, listed: ListedContext | None = None
    ) -> None:
        """`listed`: the context window a provider's model list stated for a model."""
        self._store = store
        self._client = client
        self._listed: ListedContext = listed or (lambda provider, model: None)
        self._history = HistoryReader(store, self._listed)
        self._keys = SendKeys(store, client)

    def send(
        self,
        bot: Bot,
        conversation: Conversation,
        outgoing: Outgoing,
        *,
        on_sent: Callable[[], None] | None = None,
    ) -> AsyncGenerator[ReplyEvent, None]:
        """Store `outgoing.text` (None: retry the last user message), then stream and store
        the reply (the fields of `Outgoing` say what each choice does).

        Files an image for a model known to take none, too many or too large, are refused
        before anything is stored (AttachmentError). After an edit or a regeneration what
        followed is kept, as another branch; what is sent is the branch the new message or
        reply ends. `on_sent` is called once the request is on the wire.

        A configuration for this message only uses the per-bot key only while its provider
        is the bot's own (a key for one provider is never sent to another). A budget used up
        refuses the send before any request, unless the user chose to go over it. With
        failover on for the provider, a key refused (401, 402, 429) before any text came is
        replaced by the next usable one (KeyFailedOver says so).
        """
        ask = Ask(bot, outgoing.config or bot.config, outgoing.over_budget, outgoing.key_label)
        branch = (outgoing.edit_of, outgoing.regenerate, outgoing.answer_to)
        said = (outgoing.text, outgoing.attachments)
        ready_up = functools.partial(
            self._ready_to_send, ask, conversation, said, outgoing.fallback, branch
        )
        return self._reply(ready_up, on_sent, outgoing.toolbox, outgoing.over_budget)

    def history(self, conversation_id: int, config: BotConfig) -> SentHistory:
        """What a send with `config` would carry of the conversation now (blocking: it reads
        the database; run it in a worker thread). Kept for the next send, which then reads
        only the messages added since."""
        provider = next((p for p in providers() if p.id == config.provider), None)
        return self._history.read(conversation_id, provider, config)

    def continue_reply(
        self,
        bot: Bot,
        conversation: Conversation,
        reply_id: int,
        *,
        on_sent: Callable[[], None] | None = None,
        over_budget: bool = False,
        key_label: str | None = None,
        toolbox: ToolBox | ListTools | None = None,
    ) -> AsyncGenerator[ReplyEvent, None]:
        """Continue a reply that was cut short (stopped, cut, or at the length limit) where
        it stopped: asked of the model that wrote it, with the reply as the last turn (its
        tool rounds before it, as they were); the new text is added to the same reply, which
        is complete once it ends. `toolbox`: as for a send.

        Only the last reply of the branch on screen can be continued. Nothing is stored
        when the continuation cannot be sent (the reply stays as it was)."""
        ask = Ask(bot, bot.config, over_budget, key_label)
        return self._reply(
            functools.partial(self._ready_to_continue, ask, conversation, reply_id),
            on_sent,
            toolbox,
            over_budget,
        )

    async def _ready_to_send(
        self,
        ask: Ask,
        conversation: Conversation,
        said: tuple[str | None, tuple[Attachment, ...]],
        fallback: bool,
        branch: tuple[int | None, int | None, int | None],
    ) -> _Ready:
        store, config = self._store, ask.config
        # The database is read and written in a worker thread: a conversation of any length
        # never holds up the screen.
        await asyncio.to_thread(self._store_said, conversation.id, ask, said, branch)
        provider = _provider(config)

        def new_reply(status: MessageStatus, key_source: str | None = None) -> Message:
            return store.add_message(
                conversation.id,
                "assistant",
                "",
                status=status,
                provider=provider.id,
                model=config.model,
                key_source=key_source,
                fallback=fallback,
            )

        try:
            key = await self._keys.key_to_send(provider, ask)
        except PRE_SEND_ERRORS as error:
            # Nothing can be sent: say why, under the message (which is kept).
            failed = await asyncio.to_thread(new_reply, "error")
            await asyncio.to_thread(
                store.save_reply,
                failed.id,
                content="",
                reasoning="",
                status="error",
                error_kind=error.kind.value,
                error_message=error.one_line(),
            )
            raise
        history, order = await asyncio.to_thread(
            self._history_and_order,
            conversation.id,
            provider,
            config,
            key,
            typed=said[0],
            pinned=ask.key_label is not None,
        )
        key = await self._keys.first_usable(key, order)
        reply = await asyncio.to_thread(new_reply, "partial", key.source_text)
        request = _request(config, history.turns)
        recorder = ReplyRecorder(store, reply)
        return _Ready(provider, request, key, order, recorder, reply, history.left_out)

    def _store_said(
        self,
        conversation_id: int,
        ask: Ask,
        said: tuple[str | None, tuple[Attachment, ...]],
        branch: tuple[int | None, int | None, int | None],
    ) -> None:
        """Keep what the user said (and the branch it starts), before anything is sent.
        Files that cannot be sent are refused before anything is stored."""
        store, config = self._store, ask.config
        text, attachments = said
        if branch[0] is not None and not attachments:  # an edit keeps the files it had
            attachments = tuple(store.branch.attachments_of([branch[0]]).get(branch[0], []))
        if attachments:
            check_together(list(attachments))
            check_images(_provider(config), config.model, attachments)
        replaced = branch[0] if branch[0] is not None else branch[1]
        if replaced is not None:  # the new one follows what the replaced one followed
            store.branch_from(conversation_id, store.message(replaced).parent_id)
        elif branch[2] is not None:  # another answer to this message, beside those it has
            store.branch_from(conversation_id, branch[2])
        if text is not None:  # kept first, whatever follows
            # Any key of the user's in it is stored replaced: the redaction layer must know
            # keys set since start-up (another terminal) and the bot's own key first. Only
            # when the text could hold one: a keyring answers each entry over D-Bus.
            if could_hold_a_key(text):
                self._client.remember_stored_keys()
                store.bot_key(ask.bot.id)
            store.add_message(conversation_id, "user", text, attachments=attachments)

    async def _ready_to_continue(
        self, ask: Ask, conversation: Conversation, reply_id: int
    ) -> _Ready:
        store = self._store
        found, last_id = await asyncio.to_thread(
            store.branch.reply_and_newest, conversation.id, reply_id
        )
        reply = continuable(found, reply_id, last_id)
        ask = replace(
            ask,
            config=replace(ask.config, provider=reply.provider or "", model=reply.model or ""),
        )
        provider = _provider(ask.config)
        key = await self._keys.key_to_send(provider, ask)
        # A prefill may not end in whitespace: the model writes it again, so it goes.
        start = reply.content.rstrip() if prefills(provider) else reply.content
        rounds = await asyncio.to_thread(store.tool_turns_of, reply.id)
        last_turns = reply_turns(start, rounds) if rounds else None
        continues = True
        if last_turns and not last_turns[-1].content:
            # Stopped right after a round: answered after its results, as if never stopped.
            last_turns, continues = last_turns[:-1], False
        history, order = await asyncio.to_thread(
            self._history_and_order,
            conversation.id,
            provider,
            ask.config,
            key,
            last_turns=last_turns or (ChatMessage("assistant", start),),
            pinned=ask.key_label is not None,
        )
        key = await self._keys.first_usable(key, order)
        await asyncio.to_thread(store.set_reply_key_source, reply.id, key.source_text)
        reply = replace(reply, content=start, key_source=key.source_text)
        request = _request(ask.config, history.turns, continues=continues)
        recorder = ReplyRecorder(store, reply, continues=True, tool_turns=rounds)
        return _Ready(provider, request, key, order, recorder, reply, history.left_out)

    def _history_and_order(
        self,
        conversation_id: int,
        provider: Provider,
        config: BotConfig,
        key: ResolvedKey,
        *,
        typed: str | None = None,
        last_turns: tuple[ChatMessage, ...] = (),
        pinned: bool = False,
    ) -> tuple[SentHistory, KeyOrder | None]:
        """What the send carries of the conversation (`typed`, `last_turns`: as for
        HistoryReader.read), and, with failover on, the keys it may fail over to; none for a
        key named explicitly (`pinned`: `ask --key`). Blocking (the database, the key store
        and its index): run in a worker thread."""
        history = self._history.read(
            conversation_id, provider, config, typed=typed, last_turns=last_turns
        )
        return history, None if pinned else self._keys.key_order(provider, key, history.messages)

    async def _reply(
        self,
        ready_up: Callable[[], Awaitable[_Ready]],
        on_sent: Callable[[], None] | None,
        toolbox: ToolBox | ListTools | None = None,
        over_budget: bool = False,
    ) -> AsyncGenerator[ReplyEvent, None]:
        """Once `ready_up` has stored what comes first, stream the reply and store it as
        it arrives, however the stream ends. With a `toolbox`, the model's tool calls are run
        (by the toolbox's runner, which asks first or refuses) and their results sent back in
        a request of their own, each priced and its budget checked, until the model answers
        without a call or `most_rounds` requests were made."""
        ready = await ready_up()
        recorder, key, order = ready.recorder, ready.key, ready.order
        yield ReplyStarted(ready.reply, key)
        if order is not None and order.notices:
            yield KeyFailedOver("; ".join(order.notices), key)
        # Counting the messages left out walks the whole branch: done beside the stream once
        # it answers, so that it never holds the request back (on 2 cores the walk slowed
        # the request by ~4 ms), and said as soon as it is known.
        counting: asyncio.Task[HistoryTrimmed] | None = None
        to_count = ready.left_out is not None
        ended: Done | None = None
        # Also flush on a timer: text followed by a long silence must not wait in memory.
        flusher = asyncio.create_task(flush_every_second(recorder))
        try:
            if toolbox is not None and not isinstance(toolbox, ToolBox):
                toolbox = await toolbox()  # listed now that what the user said is kept
            if toolbox is not None:
                for notice in toolbox.notices:
                    yield ToolNotice(notice)
                request, toolbox = offered(ready.provider, ready.request, toolbox)
                ready = replace(ready, request=request, toolbox=toolbox, over_budget=over_budget)
            else:
                ready = replace(ready, request=without_tools(ready.request))
            request, rounds = ready.request, 1
            while True:
                calls: tuple[ToolCall, ...] = ()
                streaming = self._keys.stream(
                    ready.provider, request, key, order, on_sent, ready.reply.id
                )
                # Closed at once however this ends: closing it closes the connection.
                async with contextlib.aclosing(streaming):
                    async for event in streaming:
                        if to_count:
                            counting, to_count = self._count_left_out(ready), False
                        if isinstance(event, KeyFailedOver):
                            key = event.key
                            yield event
                            continue
                        if counting is not None and counting.done():
                            yield counting.result()
                            counting = None
                        if isinstance(event, ToolCalls):
                            calls = event.calls
                        recorder.add(event)
                        if isinstance(event, Done):
                            ended = event
                        yield event
                if not calls or ready.toolbox is None:
                    break
                if rounds >= ready.toolbox.most_rounds:
                    yield ToolRoundsSpent(rounds)
                    break
                results: list[ToolResult] = []
                for call in calls:
                    result = await run_call(ready.toolbox, call)
                    results.append(result)
                    yield ToolRan(call, result)
                said = recorder.next_round(calls, tuple(results))
                if ready.provider.needs_key and not ready.over_budget:
                    # What the rounds so far cost counts: priced and saved before the check.
                    await asyncio.to_thread(recorder.save_cost_so_far)
                    await asyncio.to_thread(
                        check_budgets, self._store, ready.provider.id, request.model
                    )
                request = with_round(request, said, calls, tuple(results))
                on_sent, ended, rounds = None, None, rounds + 1
            if counting is not None:
                yield await counting
        except ByokError as error:
            if counting is not None:
                counting.cancel()
            flusher.cancel()
            recorder.finish(
                "partial" if recorder.text else "error", error.kind.value, error.one_line()
            )
            raise
        except BaseException:  # cancelled by the user (Escape), SIGTERM, or the app quitting
            if counting is not None:
                counting.cancel()
            flusher.cancel()
            if ended is not None:  # its end had come: only what follows it was stopped
                recorder.finish(*how_it_ended(ended, ready.request.max_tokens))
            else:
                recorder.finish(
                    "partial", ErrorKind.TRUNCATED.value, "stopped before the reply finished"
                )
            raise
        flusher.cancel()
        yield await recorder.finish_in_thread(*how_it_ended(ended, ready.request.max_tokens))

    def _count_left_out(self, ready: _Ready) -> asyncio.Task[HistoryTrimmed] | None:
        room = ready.left_out
        if room is None:
            return None
        # A reply that called tools is several turns: counted once, as one message.
        sent = sum(not (m.tool_calls or m.tool_results) for m in ready.request.messages)

        new_reply = 0 if ready.request.continues else 1  # the reply being written is not sent

        def count() -> HistoryTrimmed:
            try:
                total: int | None = (
                    self._history.branch_length(ready.reply.conversation_id) - new_reply
                )
            except sqlite3.Error:  # the notice goes without the count, the reply goes on
                log.exception("counting the conversation's messages failed")
                total = None
            return HistoryTrimmed(sent, total, room.model, room.context_tokens)

        return asyncio.create_task(asyncio.to_thread(count))
