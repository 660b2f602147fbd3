"""`byok-tui bot …`: list, add, edit, share, import and remove bots, and set a bot's own key
(read like `keys set`: never echoed, never printed)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from byok_tui.app_services.services import remember_every_key
from byok_tui.cli.common import model_argument, usage, whole_number
from byok_tui.cli.progress import open_with_default_bot
from byok_tui.core.errors import ByokError
from byok_tui.core.records import BotConfig
from byok_tui.keys import normalize_key


def add_parsers(commands: Any) -> None:
    from byok_tui.cli.common import provider_argument

    listed = commands.add_parser(
        "conversations",
        help="list conversations with their ids, newest first",
        description="Each conversation's #id (for `ask --conversation ID` and `export "
        "--markdown --conversation ID`), its bot, when it last changed and its title.",
    )
    listed.add_argument("--bot", metavar="NAME", help="only this bot's")
    listed.add_argument(
        "--limit", type=whole_number, default=20, metavar="N", help="at most N (default 20)"
    )
    listed.set_defaults(run=_conversations)

    bot = commands.add_parser("bot", help="list, add, share, import and remove bots")
    bot.set_defaults(run=lambda _args: usage(bot))
    actions = bot.add_subparsers(dest="action", metavar="ACTION")
    actions.add_parser("list", help="every bot and its configuration").set_defaults(run=_list)

    add = actions.add_parser("add", help="create a bot")
    add.add_argument("name", metavar="NAME")
    add.add_argument("-p", "--provider", type=provider_argument, required=True)
    add.add_argument(
        "-m", "--model", type=model_argument, help="default: the provider's default model"
    )
    add.add_argument("--system", default="", metavar="TEXT", help="system prompt")
    add.add_argument("--temperature", type=float, help="within the provider's range")
    _fallback_argument(add)
    add.set_defaults(run=_add)

    edit = actions.add_parser(
        "edit",
        help="change a bot's provider, model, prompt, temperature or fallbacks",
        description="Change the settings given; the others stay as they are.",
    )
    edit.add_argument("name", metavar="NAME")
    edit.add_argument("-p", "--provider", type=provider_argument)
    edit.add_argument(
        "-m", "--model", type=model_argument, help="default with -p: that provider's default model"
    )
    edit.add_argument("--system", metavar="TEXT", help="system prompt")
    edit.add_argument("--temperature", type=float, help="within the provider's range")
    fallbacks = edit.add_mutually_exclusive_group()
    _fallback_argument(fallbacks)
    fallbacks.add_argument("--no-fallbacks", action="store_true", help="remove every fallback")
    edit.set_defaults(run=_edit)

    key = actions.add_parser(
        "key",
        help="set a per-bot key (hidden prompt or stdin), a command or a label; or --clear",
        description="Set the bot's own key, used instead of its provider's global key for "
        "this bot only. Read like `keys set`: hidden on a terminal, one line from standard "
        "input otherwise. --command stores a command that prints the key instead (run like "
        "`keys set --command`); --label makes the bot use one of its provider's labelled keys "
        "(`keys set PROVIDER --label LABEL`). One of the three at a time. --clear falls back "
        "to the global key.",
    )
    key.add_argument("name", metavar="NAME")
    choice = key.add_mutually_exclusive_group()
    choice.add_argument("--clear", action="store_true", help="remove the bot's own key choice")
    choice.add_argument(
        "--command", dest="key_command", metavar="COMMAND", help="a command that prints the key"
    )
    choice.add_argument("--label", dest="key_label", metavar="LABEL", help="a labelled key")
    key.set_defaults(run=_key)

    from byok_tui.cli import bot_tools

    bot_tools.add_parser(actions)

    share = actions.add_parser("share", help="print a link with the bot's configuration only")
    share.add_argument("name", metavar="NAME")
    share.set_defaults(run=_share)

    take = actions.add_parser("import", help="add a bot from a share link")
    take.add_argument("link", metavar="LINK")
    take.set_defaults(run=_import_link)

    remove = actions.add_parser("rm", help="remove a bot and its conversations")
    remove.add_argument("name", metavar="NAME")
    remove.set_defaults(run=_remove)


def _list(_args: argparse.Namespace) -> int:
    from byok_tui.core.registry import providers

    _services, store = open_with_default_bot()
    rows = [("BOT", "PROVIDER", "MODEL", "KEY", "FALLBACKS")]
    known = {p.id: p for p in providers()}
    for bot in store.bots():
        provider = known.get(bot.config.provider)
        if provider is None:  # one the user defined, removed since
            key = "provider not defined: `byok-tui provider add` or `bot edit -p`"
        elif not provider.needs_key:
            key = "no key" if provider.custom else "local runtime"
        elif bot.has_key:
            key = "per-bot key"
        elif bot.kept_key_for:
            key = f"global (its own key is kept for {bot.kept_key_for})"
        else:
            key = "global"
        fallbacks = ", ".join(bot.config.fallbacks) or "-"
        rows.append((bot.name, bot.config.provider, bot.config.model, key, fallbacks))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for row in rows:
        print("  ".join([*(row[i].ljust(widths[i]) for i in range(4)), row[4]]))
    return 0


def _conversations(args: argparse.Namespace) -> int:
    import time

    _services, store = open_with_default_bot()
    bots = [store.bot(args.bot)] if args.bot else store.bots()
    found = [(c, b) for b in bots for c in store.conversations(b.id, limit=args.limit)]
    found.sort(key=lambda pair: -pair[0].updated)
    if not found:
        print("No conversations yet: `byok-tui ask` or the app starts one.")
        return 0
    for conversation, bot in found[: args.limit]:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(conversation.updated))
        print(f"#{conversation.id}\t{bot.name}\t{when}\t{conversation.title}")
    return 0


def _fallback_argument(parser: Any) -> None:
    parser.add_argument(
        "--fallback",
        dest="fallbacks",
        action="append",
        metavar="PROVIDER:MODEL",
        help="asked, with its provider's own key, when the bot's provider is rate-limited, "
        "out of credit, failing or unreachable before any text (repeatable, in order)",
    )


def _checked_fallbacks(texts: list[str]) -> tuple[str, ...]:
    from byok_tui.providers.fallbacks import parse_fallbacks

    return tuple(str(f) for f in parse_fallbacks(texts))


def _add(args: argparse.Namespace) -> int:
    from byok_tui.providers.errors import check_settings

    config = BotConfig(
        args.name,
        args.provider.id,
        args.model or args.provider.default_model,
        args.system,
        args.temperature,
        fallbacks=_checked_fallbacks(args.fallbacks or []),
    )
    check_settings(args.provider, config.temperature, config.max_tokens)  # exit 2, not stored
    _services, store = open_with_default_bot()
    store.create_bot(config)
    print(f"Added bot {args.name!r} ({config.provider}, {config.model}).")
    _say_fallbacks(config)
    return 0


def _edit(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from byok_tui.core.registry import get_provider
    from byok_tui.providers.errors import check_settings

    _services, store = open_with_default_bot()
    bot = store.bot(args.name)
    config = bot.config
    if args.provider is not None and args.provider.id != config.provider:
        config = replace(config, provider=args.provider.id, model=args.provider.default_model)
    if args.model:
        config = replace(config, model=args.model)
    if args.system is not None:
        config = replace(config, system_prompt=args.system)
    if args.temperature is not None:
        config = replace(config, temperature=args.temperature)
    if args.fallbacks:
        config = replace(config, fallbacks=_checked_fallbacks(args.fallbacks))
    elif args.no_fallbacks:
        config = replace(config, fallbacks=())
    check_settings(get_provider(config.provider), config.temperature, config.max_tokens)
    store.update_bot(bot.id, config)
    print(f"Changed bot {bot.name!r} ({config.provider}, {config.model}).")
    _say_fallbacks(config)
    return 0


def _say_fallbacks(config: BotConfig) -> None:
    if config.fallbacks:
        print(f"Fallbacks, in order: {', '.join(config.fallbacks)}.")


def _key(args: argparse.Namespace) -> int:
    from byok_tui.cli.keys import read_key
    from byok_tui.core.registry import get_provider

    _services, store = open_with_default_bot()
    bot = store.bot(args.name)
    provider = get_provider(bot.config.provider)
    if not provider.needs_key and not args.clear:
        raise ByokError(
            f"{bot.name!r} uses {provider.display_name}, a local runtime that takes no key",
            remedy="Nothing to store: byok-tui talks to it without one.",
        )
    if args.clear:
        store.set_bot_key(bot.id, None)
        store.set_bot_key_command(bot.id, None)
        print(f"Cleared the per-bot key of {bot.name!r}: it uses the global key again.")
        return 0
    if args.key_command is not None:
        from byok_tui.keys.index import check_command

        store.set_bot_key_command(bot.id, check_command(args.key_command))
        print(f"Saved the key command of {bot.name!r}; the key it prints is not stored.")
        return 0
    if args.key_label is not None:
        from byok_tui.keys.base import DEFAULT_LABEL, check_label

        label = check_label(args.key_label)
        store.set_bot_key_label(bot.id, None if label == DEFAULT_LABEL else label)
        print(f"{bot.name!r} uses the {provider.display_name} key labelled {label}.")
        return 0
    key = normalize_key(read_key(f"per-bot key for {bot.name}"))
    if not key:
        raise ByokError("no key was given; nothing was changed")
    store.set_bot_key(bot.id, key)
    print(f"Saved the per-bot key of {bot.name!r}.")
    return 0


def _share(args: argparse.Namespace) -> int:
    from byok_tui.storage.share import encode_bot_link

    services, store = open_with_default_bot()
    remember_every_key(services, store)
    print(encode_bot_link(store.bot(args.name).config))
    return 0


def _import_link(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from byok_tui.storage.share import decode_bot_link
    from byok_tui.storage.transfer import free_bot_name

    checked = decode_bot_link(args.link)
    _services, store = open_with_default_bot()
    name = free_bot_name(store, checked.config.name)
    store.create_bot(replace(checked.config, name=name))
    if checked.dropped_key_fields:
        print(
            "byok-tui: warning: the link tried to carry or redirect a key "
            f"({', '.join(checked.dropped_key_fields)}); those fields were dropped.",
            file=sys.stderr,
        )
    elif checked.dropped:
        print(f"byok-tui: ignored unknown fields: {', '.join(checked.dropped)}", file=sys.stderr)
    print(f"Imported bot {name!r}: it uses your own {checked.config.provider} key.")
    return 0


def _remove(args: argparse.Namespace) -> int:
    _services, store = open_with_default_bot()
    bot = store.bot(args.name)
    store.delete_bot(bot.id)
    print(f"Removed bot {bot.name!r} and its conversations.")
    return 0
