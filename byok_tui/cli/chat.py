"""`byok-tui ask`: one-shot chat, streamed to standard output."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from byok_tui.app_services.services import Services, open_services
from byok_tui.cli.ask_reply import (
    ASK_EPILOG,
    EXIT_STATUS,
    print_reply,
    send_with_fallbacks,
    service_for,
)
from byok_tui.cli.common import (
    keep_the_ledger,
    model_argument,
    provider_argument,
    provider_client,
    whole_number,
)
from byok_tui.core.errors import ByokError
from byok_tui.core.records import BotConfig
from byok_tui.core.redaction import secrets_in
from byok_tui.core.registry import Provider, get_provider, providers
from byok_tui.core.system import on_terminate
from byok_tui.providers.errors import check_settings

if TYPE_CHECKING:
    from byok_tui.core.attachments import Attachment
    from byok_tui.core.records import Bot, Conversation
    from byok_tui.storage.store import Store


def _temperature_ranges() -> str:
    """The registry's temperature ranges in words: the usual one, then the exceptions."""
    from collections import Counter

    def words(low: float, high: float) -> str:
        return f"{low:g} to {high:g}"

    usual = Counter(p.temperature_range for p in providers()).most_common(1)[0][0]
    others = [
        f"{p.display_name} {words(*p.temperature_range)}"
        for p in providers()
        if p.temperature_range != usual
    ]
    return "; ".join([words(*usual), *others])


def add_parsers(commands: Any) -> None:
    ask = commands.add_parser(
        "ask",
        help="one-shot chat: the reply is streamed to standard output",
        description="Send one prompt and stream the reply to standard output. The prompt "
        "comes from the arguments, or from standard input when there are none.",
        epilog=ASK_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ask.add_argument("prompt", nargs="*", metavar="PROMPT", help="the prompt (default: stdin)")
    ask.add_argument("-p", "--provider", type=provider_argument, help="provider id")
    ask.add_argument(
        "-m", "--model", type=model_argument, help="model id (default: the provider's default)"
    )
    ask.add_argument("--system", metavar="TEXT", help="system prompt")
    ask.add_argument(
        "--temperature",
        type=float,
        help=f"sampling temperature, within the provider's range ({_temperature_ranges()})",
    )
    ask.add_argument(
        "--key",
        dest="key_label",
        metavar="LABEL",
        help="send with this labelled key of the provider (`default`: the default key)",
    )
    ask.add_argument("--bot", metavar="NAME", help="use this bot's settings and per-bot key")
    carry_on = ask.add_mutually_exclusive_group()
    carry_on.add_argument(
        "-c",
        "--in-last",
        action="store_true",
        help="add to the bot's last conversation, its history sent with the prompt (as "
        "`llm -c`); without it, each ask is a conversation of its own",
    )
    carry_on.add_argument(
        "--conversation",
        type=whole_number,
        metavar="ID",
        help="add to this conversation (its bot's settings; `byok-tui conversations` lists "
        "the ids)",
    )
    ask.add_argument(
        "--fallback",
        dest="fallbacks",
        action="append",
        metavar="PROVIDER:MODEL",
        help="when the provider is rate-limited, out of credit, failing or unreachable before "
        "any text, ask this one (with its own key) instead; repeatable, in order (default: "
        "the bot's fallbacks with --bot)",
    )
    ask.add_argument(
        "--max-tokens", type=int, help="reply length cap, at least 1 (default: the bot's)"
    )
    ask.add_argument(
        "--timeout", type=float, metavar="SECONDS", help="longest silence between chunks"
    )
    ask.add_argument(
        "--reasoning", action="store_true", help="also print reasoning, to standard error"
    )
    ask.add_argument(
        "--over-budget",
        action="store_true",
        help="send even when a budget (`byok-tui budget`) is reached, this once",
    )
    ask.add_argument(
        "--attach",
        dest="attachments",
        action="append",
        type=Path,
        metavar="FILE",
        help="send a file with the prompt (repeatable): a text file goes in as a fenced block "
        "under its name, an image (PNG, JPEG, WEBP, GIF) in the provider's image format, to "
        "a model that takes images",
    )
    ask.add_argument(
        "--continue",
        dest="continue_reply",
        action="store_true",
        help="continue the bot's last reply cut short (stopped, cut off, or at the length "
        "limit) where it stopped, with the model that wrote it; prints what comes next",
    )
    ask.add_argument(
        "--estimate",
        action="store_true",
        help="print the estimated input tokens and cost, and send nothing (a local estimate)",
    )
    ask.add_argument(
        "--allow-tool",
        action="append",
        default=[],
        metavar="SERVER:TOOL",
        help="run this tool of the bot's MCP servers when the model calls it (repeatable; "
        "SERVER:* for all of a server's); any other call is refused and the model told",
    )
    ask.add_argument(
        "--compare",
        metavar="P:M,P:M",
        help="send the prompt to 2 to 4 models at once (PROVIDER:MODEL, comma-separated) "
        "and print each reply under a line of its figures as it finishes; the replies are "
        "kept as alternatives of one another",
    )
    ask.add_argument(
        "--json",
        action="store_true",
        help="with --compare: one JSON object a target, a line each (provider, model, text, "
        "first_token_s, total_s, input_tokens, output_tokens, cost_usd, error)",
    )
    ask.add_argument(
        "--allow-secrets",
        action="store_true",
        help="send the prompt even if it contains one of your keys or a key-shaped string",
    )
    ask.set_defaults(run=_ask)


def _choose_provider(services: Services, requested: Provider | None) -> Provider:
    from byok_tui.app_services.services import first_usable_provider

    provider = requested or first_usable_provider(services, providers())
    if provider is None:
        raise ByokError("no provider has a key; pass -p PROVIDER or set a key")
    return provider


def _read_prompt(words: list[str]) -> str:
    if words:
        return " ".join(words)
    if sys.stdin.isatty():
        raise ByokError("no prompt: give it as arguments or on standard input")
    prompt = sys.stdin.read()
    if not prompt.strip():
        raise ByokError("the prompt on standard input is empty")
    return prompt


def _ask(args: argparse.Namespace) -> int:
    from byok_tui.app_services.services import default_bot, remember_every_key
    from byok_tui.chat.send_keys import check_model
    from byok_tui.cli.progress import open_store
    from byok_tui.core.titles import title_for
    from byok_tui.providers.fallbacks import parse_fallbacks
    from byok_tui.spend.budgets import free_quota, standings

    services = open_services()
    store = open_store(services)
    joined = store.conversation(args.conversation) if args.conversation else None
    if joined is not None:
        bot = store.bot(joined.bot_id)
        if args.bot and store.bot(args.bot).id != bot.id:
            raise ByokError(f"conversation {joined.id} is the bot {bot.name!r}'s, not {args.bot!r}")
        args.bot = bot.name  # its bot's settings, as --bot gives them
    else:
        bot = store.bot(args.bot) if args.bot else default_bot(services, store)
    if args.in_last:
        joined = next(iter(store.conversations(bot.id, limit=1)), None)
        if joined is None:
            raise ByokError(
                f"the bot {bot.name!r} has no conversation yet",
                remedy="Leave out -c to start one.",
            )
        args.bot = bot.name
    if args.continue_reply:
        return _continue(services, store, bot, args)
    if args.compare is not None:
        return _compare(services, store, bot, joined, args)
    if args.json:
        raise ByokError("--json goes with --compare")
    if args.provider is not None:
        provider = args.provider
    elif args.bot:
        provider = get_provider(bot.config.provider)
    else:
        provider = _choose_provider(services, None)
    own = provider.id == bot.config.provider
    config = BotConfig(
        name=bot.name,
        provider=provider.id,
        model=args.model or (bot.config.model if own else provider.default_model),
        system_prompt=args.system if args.system is not None else bot.config.system_prompt,
        temperature=args.temperature if args.temperature is not None else bot.config.temperature,
        max_tokens=args.max_tokens if args.max_tokens is not None else bot.config.max_tokens,
    )
    check_settings(provider, config.temperature, config.max_tokens)  # usage error: exit 2
    check_model(provider, config.model)
    prompt = _read_prompt(args.prompt)
    attachments = _attachments(args.attachments or [], provider, config.model)
    if args.estimate:
        from byok_tui.spend.estimate import estimate

        guess = estimate(provider.id, config.model, [config.system_prompt, prompt])
        print(f"{guess.line()} ({provider.id} {config.model}); nothing was sent")
        return 0
    remember_every_key(services, store)  # to spot any of them in the prompt and the reply
    found = secrets_in(prompt)
    if found and not args.allow_secrets:
        raise ByokError(
            f"the prompt contains {' and '.join(found)}; nothing was sent",
            remedy="Remove it, or pass --allow-secrets to send it anyway.",
        )
    if provider.needs_key:
        for standing in standings(store, provider.id):
            if standing.near or (standing.reached and args.over_budget):
                print(f"byok-tui: budget: {standing.describe()}", file=sys.stderr)
        quota = free_quota(store, provider.id, config.model)
        if quota is not None and (quota.near or (quota.reached and args.over_budget)):
            print(f"byok-tui: free tier: {quota.describe()}", file=sys.stderr)
    chosen = args.fallbacks if args.fallbacks else (bot.config.fallbacks if args.bot else ())
    fallbacks = parse_fallbacks(list(chosen))  # a malformed one: exit 2, nothing stored
    conversation = joined or store.create_conversation(bot.id, title_for(prompt))
    try:
        said = (prompt, attachments)
        return asyncio.run(
            send_with_fallbacks(services, store, bot, conversation, said, config, args, fallbacks)
        )
    except KeyboardInterrupt:
        print("byok-tui: interrupted; the partial reply is saved", file=sys.stderr)
        return 130


# What `ask --compare` cannot be given: each target is a provider and model of its own.
_NOT_WITH_COMPARE = {
    "provider": "-p",
    "model": "-m",
    "fallbacks": "--fallback",
    "key_label": "--key",
    "estimate": "--estimate",
    "allow_tool": "--allow-tool",
    "reasoning": "--reasoning",
}


def _compare(
    services: Services,
    store: Store,
    bot: Bot,
    joined: Conversation | None,
    args: argparse.Namespace,
) -> int:
    """`ask --compare`: the prompt to every target at once (cli/ask_compare.py)."""
    from byok_tui.app_services.services import remember_every_key
    from byok_tui.chat.compare import parse_targets, target_configs
    from byok_tui.cli.ask_compare import compare
    from byok_tui.core.titles import title_for

    given = [words for name, words in _NOT_WITH_COMPARE.items() if getattr(args, name)]
    if given:
        raise ByokError(
            f"--compare cannot be combined with {', '.join(given)}: each target names its "
            "own provider and model, and is sent as it is",
        )
    configs = target_configs(  # usage errors: exit 2
        bot,
        parse_targets(args.compare),
        system=args.system,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
    )
    prompt = _read_prompt(args.prompt)
    attachments = _attachments(
        args.attachments or [], get_provider(configs[0].provider), configs[0].model
    )
    remember_every_key(services, store)
    found = secrets_in(prompt)
    if found and not args.allow_secrets:
        raise ByokError(
            f"the prompt contains {' and '.join(found)}; nothing was sent",
            remedy="Remove it, or pass --allow-secrets to send it anyway.",
        )
    conversation = joined or store.create_conversation(bot.id, title_for(prompt))
    try:
        said = (prompt, attachments)
        return asyncio.run(compare(services, store, bot, conversation, said, configs, args))
    except KeyboardInterrupt:
        print("byok-tui: interrupted; the partial replies are saved", file=sys.stderr)
        return 130


# What `ask --continue` cannot be given: it continues with what wrote the reply.
_NOT_WITH_CONTINUE = {
    "prompt": "a prompt",
    "provider": "-p",
    "model": "-m",
    "system": "--system",
    "temperature": "--temperature",
    "fallbacks": "--fallback",
    "max_tokens": "--max-tokens",
    "estimate": "--estimate",
    "attachments": "--attach",
    "compare": "--compare",
}


def _continue(services: Services, store: Store, bot: Bot, args: argparse.Namespace) -> int:
    """`ask --continue`: the bot's last reply cut short, continued where it stopped."""
    given = [words for name, words in _NOT_WITH_CONTINUE.items() if getattr(args, name)]
    if given:
        raise ByokError(
            f"--continue cannot be combined with {', '.join(given)}: it continues with the "
            "model that wrote the reply",
            remedy="Leave them out, or ask a new question without --continue.",
        )
    found = store.last_cut_reply(bot.id)
    if found is None:
        raise ByokError(
            f"Bot {bot.name!r} has no reply cut short to continue",
            remedy="Only a reply that was stopped, cut off or ended at the length limit, "
            "and is the last of its conversation, can be continued.",
        )
    conversation, reply = found
    print(
        f"byok-tui: continuing the reply in {conversation.title!r} "
        f"({reply.provider} {reply.model}, {len(reply.content):,} characters so far)",
        file=sys.stderr,
    )
    try:
        return asyncio.run(_continue_stream(services, store, bot, conversation, reply.id, args))
    except KeyboardInterrupt:
        print("byok-tui: interrupted; the partial reply is saved", file=sys.stderr)
        return 130


async def _continue_stream(
    services: Services,
    store: Store,
    bot: Bot,
    conversation: Conversation,
    reply_id: int,
    args: argparse.Namespace,
) -> int:
    task = asyncio.current_task()
    assert task is not None
    on_terminate(asyncio.get_running_loop(), task.cancel)  # not on Windows: it ends there
    async with provider_client(services, args.timeout) as client:
        keep_the_ledger(client, store)
        from byok_tui.cli.ask_tools import toolbox_for
        from byok_tui.tools.held import HeldServers

        held = HeldServers()
        try:
            toolbox = await toolbox_for(services, store, bot, list(args.allow_tool or []), held)
            sending = service_for(services, store, client).continue_reply(
                bot,
                conversation,
                reply_id,
                over_budget=args.over_budget,
                key_label=args.key_label,
                toolbox=toolbox,
            )
            error, _arrived = await print_reply(sending, args, bot.config.max_tokens)
        except asyncio.CancelledError:
            print("byok-tui: stopped (SIGTERM); the partial reply is saved", file=sys.stderr)
            return 143
        finally:
            await held.close()
    return 0 if error is None else EXIT_STATUS.get(error.kind, 1)


def _attachments(paths: list[Path], provider: Provider, model: str) -> list[Attachment]:
    """The files given with --attach, read and checked before anything is stored or sent."""
    from byok_tui.chat.history import check_images
    from byok_tui.core.attachments import check_together, read_attachment

    attachments = [read_attachment(path) for path in paths]
    check_together(attachments)
    check_images(provider, model, attachments)
    return attachments
