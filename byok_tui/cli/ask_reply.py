"""`byok-tui ask`'s reply: sent (then each fallback in turn, while the failure is one another
provider may not share), printed as it streams with the user's keys redacted, even a key cut
across two pieces, and the exit status it ends with."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from byok_tui.app_services.services import Services
from byok_tui.chat.outgoing import Outgoing, ToolBox
from byok_tui.cli.common import keep_the_ledger, provider_client
from byok_tui.core.errors import ByokError, ErrorKind, as_one_line
from byok_tui.core.records import BotConfig
from byok_tui.core.redaction import StreamRedactor
from byok_tui.core.registry import get_provider
from byok_tui.core.system import on_terminate
from byok_tui.providers.types import Done, RateLimitWait, ReasoningDelta, TextDelta

if TYPE_CHECKING:
    from byok_tui.chat.conversation import ConversationService
    from byok_tui.core.attachments import Attachment
    from byok_tui.core.records import Bot, Conversation
    from byok_tui.providers.client import ProviderClient
    from byok_tui.providers.fallbacks import Fallback
    from byok_tui.storage.store import Store

EXIT_STATUS: dict[ErrorKind, int] = {
    ErrorKind.NO_KEY: 3,
    ErrorKind.AUTH: 4,
    ErrorKind.PERMISSION: 4,
    ErrorKind.RATE_LIMIT: 5,
    ErrorKind.NETWORK: 6,
    ErrorKind.TIMEOUT: 6,
    ErrorKind.TRUNCATED: 6,
    ErrorKind.BILLING: 7,
    ErrorKind.NOT_FOUND: 8,
    ErrorKind.BAD_REQUEST: 8,
    ErrorKind.TOO_LARGE: 8,
    ErrorKind.OVERLOADED: 10,  # a server error or overload: worth retrying, unlike 8
    ErrorKind.PROTOCOL: 8,
    ErrorKind.USAGE: 2,
    ErrorKind.BUDGET: 9,
}

ASK_EPILOG = """\
exit status:
  0 the reply arrived whole
  1 other error
  2 bad usage
  3 no API key
  4 invalid key or no permission
  5 rate limited
  6 network failure, timeout, or the reply cut off; at the length limit too
    (`byok-tui ask --continue` continues it where it stopped)
  7 credits or billing
  8 the provider refused the request
  9 a budget (`byok-tui budget`) is reached: nothing was sent; --over-budget sends anyway
  10 the provider's servers failed or are overloaded (5xx, 529): retry later

With --compare: 0 when any target answered, else the first target's status.

Every exchange is saved as a conversation of the bot (--bot, else the default bot), so
nothing is lost if the connection or the process dies: the app shows it later.
Without -p: the bot's provider with --bot, else the first provider with a usable key.
With fallbacks (--fallback, or the bot's with --bot), standard error says which one answered;
never after a 400, 401 or 403, nor once text arrived."""


def service_for(services: Services, store: Store, client: ProviderClient) -> ConversationService:
    from byok_tui.app_services.services import model_cache
    from byok_tui.chat.conversation import ConversationService

    return ConversationService(store, client, model_cache(services).context_of)


@dataclass(frozen=True, slots=True)
class _Exchange:
    """What every attempt of one `ask` shares."""

    service: ConversationService
    bot: Bot
    conversation: Conversation
    args: argparse.Namespace
    attachments: list[Attachment]  # sent with the prompt, on the first attempt
    toolbox: ToolBox | None = None  # the bot's tools, and the runner obeying --allow-tool


async def send_with_fallbacks(
    services: Services,
    store: Store,
    bot: Bot,
    conversation: Conversation,
    said: tuple[str, list[Attachment]],
    config: BotConfig,
    args: argparse.Namespace,
    fallbacks: tuple[Fallback, ...],
) -> int:
    """Send the prompt, then each fallback in turn while the failure is one another provider
    may not share (fallbacks.py); the exit status is the last attempt's."""
    task = asyncio.current_task()
    assert task is not None
    on_terminate(asyncio.get_running_loop(), task.cancel)  # not on Windows: it ends there
    async with provider_client(services, args.timeout) as client:
        keep_the_ledger(client, store)
        from byok_tui.cli.ask_tools import toolbox_for
        from byok_tui.tools.held import HeldServers

        service = service_for(services, store, client)
        held = HeldServers()  # the tools' servers, kept between calls until ask ends
        try:
            toolbox = await toolbox_for(services, store, bot, list(args.allow_tool or []), held)
            exchange = _Exchange(service, bot, conversation, args, said[1], toolbox)
            return await _attempts(exchange, said[0], config, [None, *fallbacks])
        except asyncio.CancelledError:
            print("byok-tui: stopped (SIGTERM); the partial reply is saved", file=sys.stderr)
            return 143
        finally:
            await held.close()


async def _attempts(
    exchange: _Exchange, text: str | None, config: BotConfig, order: list[Fallback | None]
) -> int:
    from byok_tui.providers.fallbacks import fallback_config, falls_back, short_wait, what_happened

    for number, fallback in enumerate(order):
        attempt = config if fallback is None else fallback_config(config, fallback)
        retried = False
        while True:
            error, arrived = await _attempt(exchange, text, attempt, fallback is not None)
            text = None  # the prompt is stored: later attempts send it again
            if error is None:
                if fallback is not None:
                    print(f"byok-tui: answered by fallback {fallback}", file=sys.stderr)
                return 0
            last = number == len(order) - 1
            wait = short_wait(error)
            if last or not falls_back(error, text_arrived=arrived):
                return EXIT_STATUS.get(error.kind, 1)
            if wait is not None and not retried:
                retried = True
                print(f"byok-tui: waiting {wait:.0f} s, then trying again", file=sys.stderr)
                await asyncio.sleep(wait)
                continue
            print(
                f"byok-tui: {what_happened(attempt.provider, error)}; "
                f"trying fallback {order[number + 1]}",
                file=sys.stderr,
            )
            break
    return 1  # not reached: the last attempt returns


async def _attempt(
    exchange: _Exchange, text: str | None, config: BotConfig, fallback: bool
) -> tuple[ByokError | None, bool]:
    """One request, its reply printed as it comes: the error it ended with (None: it ended
    whole), and whether any text had arrived."""
    args = exchange.args
    outgoing = Outgoing(
        text,
        tuple(exchange.attachments) if text is not None else (),
        config=config,
        fallback=fallback,
        over_budget=args.over_budget,
        key_label=None if fallback else args.key_label,
        toolbox=exchange.toolbox,
    )
    sending = exchange.service.send(exchange.bot, exchange.conversation, outgoing)
    return await print_reply(sending, args, config.max_tokens)


async def print_reply(
    sending: AsyncGenerator[object, None], args: argparse.Namespace, max_tokens: int
) -> tuple[ByokError | None, bool]:
    """Print a reply as it comes (reasoning too with --reasoning, to standard error): the
    error it ended with (None: it ended whole), and whether any text had arrived."""
    from byok_tui.chat.history import HistoryTrimmed
    from byok_tui.chat.key_failover import KeyFailedOver
    from byok_tui.chat.outgoing import ToolNotice, ToolRoundsSpent
    from byok_tui.chat.reply_events import LengthLimitReached, ReplyStarted

    reply, reasoning = _Printer(sys.stdout), _Printer(sys.stderr)
    arrived = False
    ended: ByokError | None = None
    provider_name = ""
    try:
        # Closed however this ends (a broken pipe too): closing saves what arrived.
        async with contextlib.aclosing(sending):
            async for event in sending:
                if isinstance(event, TextDelta):
                    arrived = arrived or bool(event.text)
                    reply.write(event.text)
                elif isinstance(event, ReasoningDelta) and args.reasoning:
                    reasoning.write(event.text)
                elif isinstance(event, ReplyStarted):
                    provider_name = get_provider(event.message.provider or "").display_name
                    if event.key.warning:
                        print(f"byok-tui: warning: {event.key.warning}", file=sys.stderr)
                elif isinstance(event, KeyFailedOver | HistoryTrimmed):
                    print(f"byok-tui: {event.notice}", file=sys.stderr)
                elif isinstance(event, RateLimitWait):
                    print(
                        f"byok-tui: waiting {event.seconds:.0f} s to stay under "
                        f"{provider_name}'s {event.requests_per_minute} requests per minute",
                        file=sys.stderr,
                    )
                elif isinstance(event, Done) and event.at_length_limit:
                    ended = LengthLimitReached(max_tokens)
                elif isinstance(event, ToolNotice):
                    print(f"byok-tui: {event.text}", file=sys.stderr)
                elif isinstance(event, ToolRoundsSpent):
                    print(
                        f"byok-tui: the model asked for tools again after {event.rounds} "
                        "rounds; stopped there (what it wrote is kept)",
                        file=sys.stderr,
                    )
    except ByokError as error:  # a provider's answer, no usable key, a failed save
        reasoning.end()
        reply.end()
        print(f"byok-tui: {shell_words(error)}", file=sys.stderr)
        return error, arrived
    except asyncio.CancelledError:
        reply.end()
        raise
    reasoning.end()
    reply.end()
    if ended is not None:
        print(f"byok-tui: {ended.one_line()}", file=sys.stderr)
    return ended, arrived


def shell_words(error: ByokError) -> str:
    """The error as the shell says it: a remedy that names the app's buttons names the
    option instead."""
    if error.kind is ErrorKind.BUDGET:
        return as_one_line(
            f"{error.message}. Add --over-budget to send anyway this once, raise it "
            "(`byok-tui budget set`), or wait for the next period."
        )
    return error.one_line()


class _Printer:
    """Streamed text to a terminal or a pipe, with the user's keys replaced (even a key cut
    across two pieces), ended with a new line if anything was written."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._redactor = StreamRedactor()
        self._wrote = False

    def write(self, text: str) -> None:
        shown = self._redactor.feed(text)
        if shown:
            self._stream.write(shown)
            self._stream.flush()
            self._wrote = True

    def end(self) -> None:
        rest = self._redactor.flush()
        if rest or self._wrote:
            self._stream.write(rest + "\n")
            self._stream.flush()
            self._wrote = False
