"""`byok-tui ask --compare P:M,P:M[,…]`: one prompt to two to four models at once, each
reply printed whole under a header line with its figures, in the order they finish (or, with
--json, one object a line).

The replies are kept as alternatives of one another under the prompt, each naming its
model, so the app shows them as alternatives (n/m) and nothing is lost. The first target stores the
prompt; the others answer that stored message beside it, started one after another (each
once its reply's row exists, a few milliseconds) so that no two change the branch at once,
then all stream together. Each is a normal send: its own key (and failover), its own
budgets and free-tier quota, its own pacing, its history bounded by its own model's
context; fallbacks do not apply (the user chose the targets). Printed text has every known
key replaced, as `ask` prints it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from byok_tui.cli.ask_reply import EXIT_STATUS, service_for, shell_words
from byok_tui.cli.common import keep_the_ledger, provider_client
from byok_tui.core.errors import ByokError
from byok_tui.core.records import BotConfig
from byok_tui.core.redaction import StreamRedactor

if TYPE_CHECKING:
    from byok_tui.app_services.services import Services
    from byok_tui.chat.outgoing import Outgoing
    from byok_tui.core.attachments import Attachment
    from byok_tui.core.records import Bot, Conversation
    from byok_tui.storage.store import Store

MOST_TARGETS = 4


@dataclass
class Outcome:
    """One target's reply and its figures, as printed."""

    provider: str
    model: str
    text: str = ""
    first_token_s: float | None = None
    total_s: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    error: ByokError | None = None

    def header(self) -> str:
        """`== openai · gpt-5.5 · first token 0.42 s · 61 tokens/s · 12 in, 240 out · $0.0031`"""
        from byok_tui.spend.pricing import format_usd

        said = [f"== {self.provider} · {self.model}"]
        if self.error is not None:
            return " · ".join([*said, f"error: {shell_words(self.error)}"])
        if self.first_token_s is not None:
            said.append(f"first token {self.first_token_s:.2f} s")
        speed = self.tokens_per_second()
        if speed is not None:
            said.append(f"{speed:.0f} tokens/s")
        if self.input_tokens is not None or self.output_tokens is not None:
            said.append(f"{self.input_tokens or 0:,} in, {self.output_tokens or 0:,} out")
        said.append("price unknown" if self.cost_usd is None else format_usd(self.cost_usd))
        return " · ".join(said)

    def tokens_per_second(self) -> float | None:
        if None in (self.output_tokens, self.first_token_s, self.total_s):
            return None
        writing = (self.total_s or 0.0) - (self.first_token_s or 0.0)
        return (self.output_tokens or 0) / writing if writing > 0 else None

    def as_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "text": self.text,
            "first_token_s": _rounded(self.first_token_s),
            "total_s": _rounded(self.total_s),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
            "error": None if self.error is None else self.error.one_line(),
        }


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 3)


def parse_targets(given: str) -> list[tuple[str, str]]:
    """`P:M,P:M[,…]`: two to four, each a provider and a model (checked as fallbacks are)."""
    from byok_tui.providers.fallbacks import FallbackError, parse_fallback

    parts = [part.strip() for part in given.split(",") if part.strip()]
    targets = [parse_fallback(part) for part in parts]  # malformed: a usage error, exit 2
    if not 2 <= len(targets) <= MOST_TARGETS:
        raise FallbackError(
            f"--compare takes 2 to {MOST_TARGETS} targets, PROVIDER:MODEL separated by commas "
            f"(given: {len(targets)})"
        )
    found = [(target.provider_id, target.model) for target in targets]
    if len(set(found)) != len(found):
        raise FallbackError("--compare names a target twice")
    return found


async def compare(
    services: Services,
    store: Store,
    bot: Bot,
    conversation: Conversation,
    said: tuple[str, list[Attachment]],
    configs: list[BotConfig],
    args: argparse.Namespace,
) -> int:
    """Send to every target, print each as it finishes; the exit status: 0 when any
    answered, else the first target's (143 when stopped by SIGTERM)."""
    from byok_tui.core.system import on_terminate

    task = asyncio.current_task()
    assert task is not None
    on_terminate(asyncio.get_running_loop(), task.cancel)  # not on Windows: it ends there
    before = await asyncio.to_thread(store.branch.newest_id, conversation.id)
    outcomes = [Outcome(config.provider, config.model) for config in configs]
    tasks: list[asyncio.Task[Outcome]] = []
    try:
        async with provider_client(services, args.timeout) as client:
            keep_the_ledger(client, store)
            service = service_for(services, store, client)
            try:
                answered: int | None = None  # the stored prompt, once the first has kept it
                for number, (config, outcome) in enumerate(zip(configs, outcomes, strict=True)):
                    outgoing = _outgoing(config, said if number == 0 else None, answered, args)
                    started = asyncio.Event()
                    sending = service.send(bot, conversation, outgoing)
                    one = _run(sending, outcome, started, config.max_tokens)
                    tasks.append(asyncio.create_task(one))
                    await started.wait()  # its reply's row exists (or it failed before one)
                    if number == 0:
                        answered = await asyncio.to_thread(
                            _prompt_stored, store, conversation, before
                        )
                for done in asyncio.as_completed(tasks):
                    _print(await done, args)
            finally:  # however it ends: closing each send saves what it received
                for running in tasks:
                    running.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
    except asyncio.CancelledError:
        print("byok-tui: stopped (SIGTERM); the partial replies are saved", file=sys.stderr)
        return 143
    if any(outcome.error is None for outcome in outcomes):
        return 0
    first = outcomes[0].error
    return 1 if first is None else EXIT_STATUS.get(first.kind, 1)


def _outgoing(
    config: BotConfig,
    said: tuple[str, list[Attachment]] | None,
    answered: int | None,
    args: argparse.Namespace,
) -> Outgoing:
    """The first target's send stores the prompt (`said`); the others answer it."""
    from byok_tui.chat.outgoing import Outgoing

    if said is not None:
        return Outgoing(said[0], tuple(said[1]), config=config, over_budget=args.over_budget)
    return Outgoing(None, config=config, answer_to=answered, over_budget=args.over_budget)


def _prompt_stored(store: Store, conversation: Conversation, before: int) -> int:
    """The prompt as the first target stored it: a user message newer than `before` (never
    an earlier question of the conversation, should storing it have failed)."""
    for message in reversed(store.messages(conversation.id)):
        if message.role == "user" and message.id > before:
            return message.id
    raise ByokError(
        "the prompt could not be stored; nothing was sent to the other targets",
        remedy="See the first target's error above.",
    )


async def _run(
    sending: AsyncGenerator[Any, None], outcome: Outcome, started: asyncio.Event, max_tokens: int
) -> Outcome:
    """One target's send, its figures noted as events come, its text with every known key
    replaced (even a key cut across two pieces)."""
    from byok_tui.chat.reply_events import LengthLimitReached, ReplyStarted
    from byok_tui.chat.reply_recorder import ReplyPriced
    from byok_tui.providers.types import Done, TextDelta

    begun = time.monotonic()
    pieces: list[str] = []
    redactor = StreamRedactor()
    try:
        async with contextlib.aclosing(sending):
            async for event in sending:
                if isinstance(event, ReplyStarted):
                    started.set()
                elif isinstance(event, TextDelta) and event.text:
                    if outcome.first_token_s is None:
                        outcome.first_token_s = time.monotonic() - begun
                    pieces.append(redactor.feed(event.text))
                elif isinstance(event, ReplyPriced):
                    usage = event.usage
                    if usage is not None:
                        outcome.input_tokens = usage.input_tokens
                        outcome.output_tokens = usage.output_tokens
                    outcome.cost_usd = event.cost.usd
                elif isinstance(event, Done) and event.at_length_limit:
                    outcome.error = LengthLimitReached(max_tokens)
    except ByokError as error:
        outcome.error = error
    finally:
        started.set()
        pieces.append(redactor.flush())
        outcome.text = "".join(pieces)
        outcome.total_s = time.monotonic() - begun
    return outcome


def _print(outcome: Outcome, args: argparse.Namespace) -> None:
    if args.json:
        print(json.dumps(outcome.as_json(), ensure_ascii=False), flush=True)
        return
    print(outcome.header())
    if outcome.text:
        print(outcome.text)
    print(flush=True)
    if outcome.error is not None:
        print(f"byok-tui: {outcome.provider}: {shell_words(outcome.error)}", file=sys.stderr)


def target_configs(
    bot: Bot, targets: list[tuple[str, str]], args: argparse.Namespace
) -> list[BotConfig]:
    """Each target's settings: the bot's, with its provider and model (the bot's own key only
    for its own provider, as every send)."""
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
            system_prompt=args.system if args.system is not None else bot.config.system_prompt,
            temperature=args.temperature
            if args.temperature is not None
            else bot.config.temperature,
            max_tokens=args.max_tokens if args.max_tokens is not None else bot.config.max_tokens,
        )
        provider = get_provider(provider_id)
        check_settings(provider, config.temperature, config.max_tokens)
        check_model(provider, model)
        configs.append(config)
    return configs
