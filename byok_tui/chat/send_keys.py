"""Which key a send goes with: the bot's choice or a label, once the settings, the model and
the budgets allow it; with failover on, the keys it may fail over to, and the stream sent
again with the next usable one when a key is refused before any text came."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass

from byok_tui.chat.key_failover import (
    KeyFailedOver,
    KeyOrder,
    fails_over,
    key_words,
    last_answering_key,
    what_went_wrong,
)
from byok_tui.core.errors import ByokError, ErrorKind
from byok_tui.core.records import Bot, BotConfig, Message
from byok_tui.core.registry import Provider
from byok_tui.keys import ResolvedKey
from byok_tui.keys.resolve import BotKeyChoice
from byok_tui.providers.client import ProviderClient
from byok_tui.providers.errors import check_settings
from byok_tui.providers.types import ChatRequest, RateLimitWait, StreamEvent
from byok_tui.spend.budgets import check_budgets
from byok_tui.storage.store import Store


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
class Ask:
    """Who asks, with what settings: the bot, its configuration for this reply (a
    fallback's, or the model that wrote a reply to continue), and the user's choices."""

    bot: Bot
    config: BotConfig
    over_budget: bool
    key_label: str | None


class SendKeys:
    """The keys of a conversation's sends: resolved, checked, failed over."""

    def __init__(self, store: Store, client: ProviderClient) -> None:
        self._store = store
        self._client = client

    async def key_to_send(self, provider: Provider, ask: Ask) -> ResolvedKey:
        """The key a send goes with, once the settings, the model and the budgets allow
        it, its command run. Raises one of PRE_SEND_ERRORS when nothing can be sent."""
        key = await asyncio.to_thread(self._checked_key, provider, ask)
        return await self._client.key_for(provider, key=key)

    def _checked_key(self, provider: Provider, ask: Ask) -> ResolvedKey:
        """The key a send goes with, its command not run yet, once the settings, the model
        and the budgets allow it. Blocking (the budgets' spend is a scan of the period's
        replies, the key store may be a keyring): run in a worker thread. The per-bot key
        is used only while the provider is the bot's own."""
        config, bot = ask.config, ask.bot
        check_settings(provider, config.temperature, config.max_tokens)
        check_model(provider, config.model)
        if provider.needs_key and not ask.over_budget:  # the local runtime costs nothing
            check_budgets(self._store, provider.id, config.model)
        own = config.provider == bot.config.provider
        bot_choice = (
            BotKeyChoice(self._store.bot_key(bot.id), bot.key_command, bot.key_label)
            if own
            else BotKeyChoice()
        )
        return self._client.resolve(provider, bot=bot_choice, label=ask.key_label)

    async def first_usable(self, key: ResolvedKey, order: KeyOrder | None) -> ResolvedKey:
        """The key to send first: with failover on, the first usable one of `order`. With none
        usable, the first as it is, and no notice: nothing was failed over."""
        if order is not None:
            usable = await self._next_usable(order, list(order.keys))
            if usable is None:
                order.notices.clear()
            key = usable or key
        return key

    def key_order(
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

    async def stream(
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
