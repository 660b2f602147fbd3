"""Compare: one message to two to four models at once, for the app and for `ask --compare`.

Each target is a normal send (its own key and failover, budgets, free-tier quota, pacing,
and history bounded by its own model's context); fallbacks do not apply (the user chose the
targets). The first target stores the message; the others answer that stored message beside
it, each started once the one before has its reply's row (a few milliseconds), so that no
two change the branch at once; then all stream together. The replies are alternatives of
one another, each naming its model: nothing is lost, and the user keeps one. No I/O here
but the database reads named so; no Textual.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from byok_tui.core.errors import ByokError
from byok_tui.core.records import BotConfig

if TYPE_CHECKING:
    from byok_tui.chat.outgoing import Outgoing
    from byok_tui.core.attachments import Attachment
    from byok_tui.core.records import Bot
    from byok_tui.storage.store import Store

MOST_TARGETS = 4


@dataclass
class Outcome:
    """One target's reply and its figures, noted as its events come."""

    provider: str
    model: str
    text: str = ""
    first_token_s: float | None = None
    total_s: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    error: ByokError | None = None
    key_source: str = ""
    begun: float = 0.0  # when its send began (time.monotonic)
    reply_id: int | None = None  # its reply, once stored

    def note(self, event: object, max_tokens: int) -> str:
        """Note what `event` says of the figures; the text it adds ("" for none)."""
        from byok_tui.chat.reply_events import LengthLimitReached, ReplyStarted
        from byok_tui.chat.reply_recorder import ReplyPriced
        from byok_tui.providers.types import Done, TextDelta

        if isinstance(event, ReplyStarted):
            self.reply_id = event.message.id
            self.key_source = event.key.source_text
        elif isinstance(event, TextDelta) and event.text:
            if self.first_token_s is None:
                self.first_token_s = time.monotonic() - self.begun
            return event.text
        elif isinstance(event, ReplyPriced):
            if event.usage is not None:
                self.input_tokens = event.usage.input_tokens
                self.output_tokens = event.usage.output_tokens
            self.cost_usd = event.cost.usd
        elif isinstance(event, Done) and event.at_length_limit:
            self.error = LengthLimitReached(max_tokens)
        return ""

    def ended(self) -> None:
        self.total_s = time.monotonic() - self.begun

    def figures(self) -> list[str]:
        """first token 0.42 s · 61 tokens/s · 12 in, 240 out · $0.0031 (what is known)."""
        from byok_tui.core.money import format_usd

        said = []
        if self.first_token_s is not None:
            said.append(f"first token {self.first_token_s:.2f} s")
        speed = self.tokens_per_second()
        if speed is not None:
            said.append(f"{speed:.0f} tokens/s")
        if self.input_tokens is not None or self.output_tokens is not None:
            said.append(f"{self.input_tokens or 0:,} in, {self.output_tokens or 0:,} out")
        if self.cost_usd is not None:
            said.append(format_usd(self.cost_usd))
        elif self.total_s is not None and self.error is None:
            said.append("price unknown")
        return said

    def tokens_per_second(self) -> float | None:
        if None in (self.output_tokens, self.first_token_s, self.total_s):
            return None
        writing = (self.total_s or 0.0) - (self.first_token_s or 0.0)
        return (self.output_tokens or 0) / writing if writing > 0 else None


def parse_targets(given: str) -> list[tuple[str, str]]:
    """`P:M,P:M[,…]`: two to four, each a provider and a model (checked as fallbacks are)."""
    from byok_tui.providers.fallbacks import FallbackError, parse_fallback

    parts = [part.strip() for part in given.split(",") if part.strip()]
    targets = [parse_fallback(part) for part in parts]  # malformed: a usage error, exit 2
    if not 2 <= len(targets) <= MOST_TARGETS:
        raise FallbackError(
            f"compare takes 2 to {MOST_TARGETS} targets, PROVIDER:MODEL separated by commas "
            f"(given: {len(targets)})"
        )
    found = [(target.provider_id, target.model) for target in targets]
    if len(set(found)) != len(found):
        raise FallbackError("compare names a target twice")
    return found


def target_configs(
    bot: Bot,
    targets: list[tuple[str, str]],
    *,
    system: str | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
) -> list[BotConfig]:
    """Each target's settings: the bot's (or those given), with its provider and model and
    no fallbacks (the bot's own key only for its own provider, as every send). A provider or
    model that cannot be used raises ByokError naming it."""
    from byok_tui.chat.send_keys import check_model
    from byok_tui.core.registry import get_provider
    from byok_tui.providers.errors import check_settings

    configs = []
    for provider_id, model in targets:
        config = replace(
            bot.config,
            provider=provider_id,
            model=model,
            fallbacks=(),
            system_prompt=bot.config.system_prompt if system is None else system,
            temperature=bot.config.temperature if temperature is None else temperature,
            max_tokens=bot.config.max_tokens if max_tokens is None else max_tokens,
        )
        provider = get_provider(provider_id)
        check_settings(provider, config.temperature, config.max_tokens)
        check_model(provider, model)
        configs.append(config)
    return configs


def target_outgoing(
    config: BotConfig,
    said: tuple[str, tuple[Attachment, ...]] | None,
    answered: int | None,
    over_budget: bool,
) -> Outgoing:
    """The first target's send stores the message (`said`); the others answer it."""
    from byok_tui.chat.outgoing import Outgoing

    if said is not None:
        return Outgoing(said[0], said[1], config=config, over_budget=over_budget)
    return Outgoing(None, config=config, answer_to=answered, over_budget=over_budget)


async def send_in_turn(
    configs: list[BotConfig],
    said: tuple[str, tuple[Attachment, ...]],
    over_budget: bool,
    send: Callable[[Outgoing], AsyncGenerator[Any, None]],
    start: Callable[[int, AsyncGenerator[Any, None], asyncio.Event], object],
    stored: Callable[[], Awaitable[int]],
) -> None:
    """Start each target's send in turn: the first stores the message (`said`), each other
    starts once the one before has its reply's row and answers that message, so that no two
    change the branch at once. `start(index, sending, started)` runs one send (in a task of
    its own) and sets `started` once its reply's row exists, or it failed before one;
    `stored()`: the message the first target stored. Raises ByokError when it could not be
    stored (nothing is sent to the others)."""
    answered: int | None = None
    for number, config in enumerate(configs):
        outgoing = target_outgoing(config, said if number == 0 else None, answered, over_budget)
        started = asyncio.Event()
        start(number, send(outgoing), started)
        await started.wait()
        if number == 0:
            answered = await stored()


def prompt_stored(store: Store, conversation_id: int, before: int) -> int:
    """The message as the first target stored it: a user message newer than `before` (never
    an earlier question of the conversation, should storing it have failed). Blocking."""
    for message in reversed(store.messages(conversation_id)):
        if message.role == "user" and message.id > before:
            return message.id
    raise ByokError(
        "the message could not be stored; nothing was sent to the other targets",
        remedy="See the first target's error.",
    )
