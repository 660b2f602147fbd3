"""Sending a message in a conversation, with nothing lost.

The user's message is stored before the request leaves; the reply is stored as it arrives
(flushed at least once a second) and marked partial until it completes, so a crash, a kill
or a network failure leaves both, with the error stored beside the reply. No Textual here:
the app and `byok-tui ask` both drive this.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass

from byok_tui.budgets import BudgetReachedError, FreeQuotaReachedError, check_budgets
from byok_tui.errors import ByokError, ErrorKind
from byok_tui.key_failover import (
    KeyFailedOver,
    KeyOrder,
    fails_over,
    key_words,
    last_answering_key,
    what_went_wrong,
)
from byok_tui.keys import NoApiKeyError, ResolvedKey, UnusableKeyError
from byok_tui.keys.command import KeyCommandError
from byok_tui.keys.resolve import BotKeyChoice, NoSuchLabelError
from byok_tui.pricing import Cost, cost_of
from byok_tui.providers.client import ProviderClient
from byok_tui.providers.errors import SettingOutOfRangeError, check_settings
from byok_tui.providers.types import (
    ChatMessage,
    ChatRequest,
    Done,
    RateLimitWait,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    Usage,
)
from byok_tui.records import Bot, BotConfig, Conversation, Message, MessageStatus
from byok_tui.redaction import redact_keys
from byok_tui.registry import Provider, UnknownProviderError, get_provider
from byok_tui.storage.store import Store

FLUSH_SECONDS = 1.0
TITLE_LENGTH = 60
log = logging.getLogger(__name__)


def title_for(first_message: str | None) -> str:
    """A new conversation's title: its first message on one line, any key in it replaced
    before it is shortened (a cut key would no longer be recognised, and leak in part)."""
    line = redact_keys(" ".join((first_message or "").split())) or "New chat"
    return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1] + "…"


class NoModelError(ByokError):
    """No model is chosen, and the provider has no default (one the user defined, without
    models): refused before any request."""

    kind = ErrorKind.USAGE


def check_model(provider: Provider, model: str) -> None:
    if not model.strip():
        raise NoModelError(
            f"No model chosen for {provider.display_name}",
            remedy=f"Choose one (ask -m MODEL, or the bot's settings); `byok-tui models "
            f"{provider.id} --refresh` lists what it serves.",
        )


@dataclass(frozen=True, slots=True)
class ReplyStarted:
    """The reply's row exists; `key` says which key is used (its source, for display)."""

    message: Message
    key: ResolvedKey


@dataclass(frozen=True, slots=True)
class ReplyPriced:
    """The reply ended with these token counts, and cost this (worked out once, and stored)."""

    usage: Usage | None
    cost: Cost


class ReplyRecorder:
    """Accumulates a streamed reply and writes it to the database at least once a second;
    prices it once, when it ends."""

    def __init__(
        self,
        store: Store,
        reply: Message,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._message_id = reply.id
        self._priced_as = (reply.provider or "", reply.model or "")
        self._clock = clock
        self._last_flush = clock()
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.usage: Usage | None = None
        self._dirty = False

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
            usage=self.usage,
            cost=cost,
        )

    def finish(
        self, status: MessageStatus, error_kind: str | None = None, error_message: str | None = None
    ) -> None:
        """The reply was cut or stopped: all of it is saved at once. Its cost, when there are
        token counts to price (Anthropic states input tokens first), is worked out in a thread
        of its own and saved after: loading the price data the first time takes ~0.3 s that
        the event loop must not wait for, and a cancelled task cannot await anything."""
        if self.usage is None or not get_provider(self._priced_as[0]).needs_key:
            # Nothing to look up (no counts: not known; the local runtime: $0): at once.
            cost = cost_of(*self._priced_as, self.usage)
            self.flush(status, error_kind, error_message, cost=cost)
            return
        self.flush(status, error_kind, error_message)
        priced_as, usage, store, message_id = (
            self._priced_as,
            self.usage,
            self._store,
            self._message_id,
        )

        def price() -> None:
            try:
                store.save_cost(message_id, cost_of(*priced_as, usage))
            except ByokError as error:  # the reply is saved; only its cost is missing
                log.warning("the cost of a cut reply was not saved: %s", error.one_line())

        threading.Thread(target=price, name="price-cut-reply", daemon=True).start()

    async def finish_in_thread(self, status: MessageStatus) -> ReplyPriced:
        """`finish`, with the price worked out in a thread: loading the price data the first
        time takes ~0.3 s, which the event loop must not wait for. The reply is saved first:
        stopped meanwhile, it is kept (without its cost)."""
        self.flush(status)
        cost = await asyncio.to_thread(cost_of, *self._priced_as, self.usage)
        self._store.save_cost(self._message_id, cost)
        return ReplyPriced(self.usage, cost)


def history_for(messages: list[Message]) -> tuple[ChatMessage, ...]:
    """What the model is shown: user messages and completed replies, in order.

    Failed and partial replies are left out (a retry re-sends the user message once, as it
    adds no new one).
    """
    return tuple(
        ChatMessage(m.role, m.content)
        for m in messages
        if m.role == "user" or m.status == "complete"
    )


class ConversationService:
    def __init__(self, store: Store, client: ProviderClient) -> None:
        self._store = store
        self._client = client

    async def send(
        self,
        bot: Bot,
        conversation: Conversation,
        text: str | None,
        *,
        config: BotConfig | None = None,
        on_sent: Callable[[], None] | None = None,
        over_budget: bool = False,
        key_label: str | None = None,
        fallback: bool = False,
        edit_of: int | None = None,
        regenerate: int | None = None,
    ) -> AsyncGenerator[ReplyStarted | StreamEvent | ReplyPriced | KeyFailedOver, None]:
        """Store `text` (None: retry the last user message), then stream and store the reply.

        `edit_of`: the stored user message `text` is an alternative to; `regenerate` (with
        `text` None): the reply to answer again. What followed them is kept, as another
        branch; what is sent is the branch the new message or reply ends.

        `on_sent` is called once the request is on the wire.

        `config` overrides the bot's configuration for this message only; the per-bot key is
        used only while the provider is the bot's own (a key for one provider is never sent
        to another). A budget used up refuses the send before any request, unless
        `over_budget` (the user chose to go over it this once). `key_label`: a labelled key
        of the provider to send with (`ask --key`), over the bot's own choice.

        With failover on for the provider, a key refused (401, 402, 429) before any text
        came is replaced by the next usable one (KeyFailedOver says so). `fallback`: `config`
        is one of the bot's fallbacks (the reply is marked as answered by it).
        """
        store = self._store
        config = config or bot.config
        replaced = edit_of if edit_of is not None else regenerate
        if replaced is not None:  # the new one follows what the replaced one followed
            store.branch_from(conversation.id, store.message(replaced).parent_id)
        if text is not None:  # kept first, whatever follows
            store.add_message(conversation.id, "user", text)
        try:
            provider = get_provider(config.provider)
        except UnknownProviderError as error:  # one the user defined, removed since
            raise ByokError(str(error), remedy=error.remedy) from None
        own = config.provider == bot.config.provider
        bot_choice = (
            BotKeyChoice(store.bot_key(bot.id), bot.key_command, bot.key_label)
            if own
            else BotKeyChoice()
        )

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
            check_settings(provider, config.temperature, config.max_tokens)
            check_model(provider, config.model)
            if provider.needs_key and not over_budget:  # the local runtime costs nothing
                check_budgets(store, provider.id, config.model)
            key = await self._client.key_for(provider, bot=bot_choice, label=key_label)
        except (
            SettingOutOfRangeError,
            NoModelError,
            BudgetReachedError,
            FreeQuotaReachedError,
            NoApiKeyError,
            NoSuchLabelError,
            KeyCommandError,
            UnusableKeyError,
        ) as error:
            # Nothing can be sent: say why, under the message (which is kept).
            failed = new_reply("error")
            store.save_reply(
                failed.id,
                content="",
                reasoning="",
                status="error",
                error_kind=error.kind.value,
                error_message=error.one_line(),
            )
            raise
        messages = store.messages(conversation.id)
        order = self._key_order(provider, key, messages)
        if order is not None:
            key = await self._next_usable(order, list(order.keys)) or key
        reply = new_reply("partial", key.source_text)
        yield ReplyStarted(reply, key)
        if order is not None and order.notices:
            yield KeyFailedOver("; ".join(order.notices), key)
        recorder = ReplyRecorder(store, reply)
        history = history_for(messages)
        if text is not None and history:
            # Stored with any key scrubbed; sent as typed (the user confirmed a key in it).
            history = (*history[:-1], ChatMessage("user", text))
        request = ChatRequest(
            model=config.model,
            messages=history,
            system=config.system_prompt or None,
            temperature=config.temperature,
            max_tokens=config.max_tokens,
        )
        finished = False
        # Also flush on a timer: text followed by a long silence must not wait in memory.
        flusher = asyncio.create_task(_flush_every_second(recorder))
        try:
            async for event in self._stream(provider, request, key, order, on_sent, reply.id):
                if isinstance(event, KeyFailedOver):
                    yield event
                    continue
                recorder.add(event)
                if isinstance(event, Done):
                    finished = True
                yield event
        except ByokError as error:
            flusher.cancel()
            recorder.finish(
                "partial" if recorder.text else "error", error.kind.value, error.one_line()
            )
            raise
        except BaseException:  # cancelled by the user (Escape), SIGTERM, or the app quitting
            flusher.cancel()
            recorder.finish(
                "partial", ErrorKind.TRUNCATED.value, "stopped before the reply finished"
            )
            raise
        flusher.cancel()
        yield await recorder.finish_in_thread("complete" if finished else "partial")

    def _key_order(
        self, provider: Provider, key: ResolvedKey, messages: list[Message]
    ) -> KeyOrder | None:
        """The keys this send may fail over to; None while the provider's failover is off."""
        if not provider.needs_key or not self._client.failover_on(provider):
            return None
        return KeyOrder(
            provider,
            key,
            self._client.keys_of(provider),
            self._store.key_health.of_provider(provider.id),
            stay_on=last_answering_key(messages),
        )

    async def _next_usable(
        self, order: KeyOrder, remaining: list[ResolvedKey]
    ) -> ResolvedKey | None:
        """The first of `remaining` (taken from it) whose answers allow sending it, its
        command run; None when none is left."""
        while remaining:
            candidate = remaining.pop(0)
            try:
                candidate = await self._client.key_for(order.provider, key=candidate)
            except ByokError as error:  # its command failed: say so, try the next
                order.notices.append(f"{order.provider.id} {key_words(candidate)}: {error.message}")
                continue
            if order.usable(candidate):
                return candidate
        return None

    async def _stream(
        self,
        provider: Provider,
        request: ChatRequest,
        key: ResolvedKey,
        order: KeyOrder | None,
        on_sent: Callable[[], None] | None,
        reply_id: int,
    ) -> AsyncGenerator[StreamEvent | KeyFailedOver, None]:
        """The reply's events; with failover on, a refusal before any text sends the request
        again with the next usable key, once per key."""
        remaining = [k for k in order.keys if k.source_text != key.source_text] if order else []
        while True:
            arrived = False
            try:
                async for event in self._client.stream_chat(
                    provider, request, key=key, on_sent=on_sent
                ):
                    arrived = arrived or not isinstance(event, RateLimitWait)
                    yield event
                return
            except ByokError as error:
                if arrived or order is None or not fails_over(error):
                    raise
                failed = key
                found = await self._next_usable(order, remaining)
                if found is None:
                    raise
                key = found
                order.notices.clear()
                self._store.set_reply_key_source(reply_id, key.source_text)
                yield KeyFailedOver(
                    f"{provider.id} {key_words(failed)}: {what_went_wrong(error)}; "
                    f"sent with {key_words(key)}",
                    key,
                )


async def _flush_every_second(recorder: ReplyRecorder) -> None:
    while True:
        await asyncio.sleep(FLUSH_SECONDS)
        try:
            recorder.flush_pending()
        except ByokError as error:
            # The reply keeps streaming to the screen; the final save reports the failure.
            log.warning("could not save the reply so far: %s", error.one_line())
