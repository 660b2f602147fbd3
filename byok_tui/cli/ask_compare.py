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
from typing import TYPE_CHECKING, Any

from byok_tui.chat.compare import Outcome, prompt_stored, send_in_turn
from byok_tui.cli.ask_reply import EXIT_STATUS, service_for, shell_words
from byok_tui.cli.common import keep_the_ledger, provider_client
from byok_tui.core.errors import ByokError
from byok_tui.core.redaction import StreamRedactor

if TYPE_CHECKING:
    from byok_tui.app_services.services import Services
    from byok_tui.core.attachments import Attachment
    from byok_tui.core.records import Bot, BotConfig, Conversation
    from byok_tui.storage.store import Store


def header(outcome: Outcome) -> str:
    """`== openai · gpt-5.5 · first token 0.42 s · 61 tokens/s · 12 in, 240 out · $0.0031`"""
    said = [f"== {outcome.provider} · {outcome.model}"]
    if outcome.error is not None:
        return " · ".join([*said, f"error: {shell_words(outcome.error)}"])
    return " · ".join([*said, *outcome.figures()])


def as_json(outcome: Outcome) -> dict[str, Any]:
    return {
        "provider": outcome.provider,
        "model": outcome.model,
        "text": outcome.text,
        "first_token_s": _rounded(outcome.first_token_s),
        "total_s": _rounded(outcome.total_s),
        "input_tokens": outcome.input_tokens,
        "output_tokens": outcome.output_tokens,
        "cost_usd": outcome.cost_usd,
        "error": None if outcome.error is None else outcome.error.one_line(),
    }


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 3)


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

                def start(number: int, sending: Any, started: asyncio.Event) -> None:
                    one = _run(sending, outcomes[number], started, configs[number].max_tokens)
                    tasks.append(asyncio.create_task(one))

                await send_in_turn(
                    configs,
                    (said[0], tuple(said[1])),
                    args.over_budget,
                    lambda outgoing: service.send(bot, conversation, outgoing),
                    start,
                    lambda: asyncio.to_thread(prompt_stored, store, conversation.id, before),
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


async def _run(
    sending: AsyncGenerator[Any, None], outcome: Outcome, started: asyncio.Event, max_tokens: int
) -> Outcome:
    """One target's send, its figures noted as events come, its text with every known key
    replaced (even a key cut across two pieces)."""
    from byok_tui.chat.reply_events import ReplyStarted

    outcome.begun = time.monotonic()
    pieces: list[str] = []
    redactor = StreamRedactor()
    try:
        async with contextlib.aclosing(sending):
            async for event in sending:
                if isinstance(event, ReplyStarted):
                    started.set()
                text = outcome.note(event, max_tokens)
                if text:
                    pieces.append(redactor.feed(text))
    except ByokError as error:
        outcome.error = error
    finally:
        started.set()
        pieces.append(redactor.flush())
        outcome.text = "".join(pieces)
        outcome.ended()
    return outcome


def _print(outcome: Outcome, args: argparse.Namespace) -> None:
    if args.json:
        print(json.dumps(as_json(outcome), ensure_ascii=False), flush=True)
        return
    print(header(outcome))
    if outcome.text:
        print(outcome.text)
    print(flush=True)
    if outcome.error is not None:
        print(f"byok-tui: {outcome.provider}: {shell_words(outcome.error)}", file=sys.stderr)
