"""`byok-tui bot tools BOT [SERVER[:TOOL]...]`: which MCP servers, or single tools of one, a bot
may use; none by default. With none given, says what the bot may use; `--clear` takes it all
back. Nothing is started here: a server is checked against the config file only."""

from __future__ import annotations

import argparse
from typing import Any

from byok_tui.core.errors import ByokError, ErrorKind


class ToolChoiceError(ByokError):
    kind = ErrorKind.USAGE


def add_parser(actions: Any) -> None:
    tools = actions.add_parser(
        "tools",
        help="choose the MCP servers (or SERVER:TOOL) a bot may use; --clear for none",
        description="Give a bot the tools of MCP servers you added with `byok-tui mcp add`: "
        "SERVER for all of a server's tools, SERVER:TOOL for one. What you give replaces what "
        "it had. `ask` offers them, and runs a call only when --allow-tool allows it; the "
        "app does not offer them yet (it will once it can ask before each call).",
    )
    tools.add_argument("name", metavar="BOT")
    tools.add_argument("tools", nargs="*", metavar="SERVER[:TOOL]")
    tools.add_argument("--clear", action="store_true", help="the bot may use no tool")
    tools.set_defaults(run=_tools)


def _tools(args: argparse.Namespace) -> int:
    from byok_tui.cli.progress import open_with_default_bot
    from byok_tui.core.registry import get_provider
    from byok_tui.tools.servers import configured_servers

    services, store = open_with_default_bot()
    bot = store.bot(args.name)
    if args.clear and args.tools:
        raise ByokError("give tools or --clear, not both", remedy="Nothing was changed.")
    if not args.clear and not args.tools:
        chosen = store.bot_tools(bot.id)
        print(f"{bot.name} may use: {', '.join(chosen) if chosen else 'no tool'}")
        return 0
    known = {server.name for server in configured_servers(services.config)}
    for entry in args.tools:
        server, _, tool = entry.partition(":")
        if server not in known or (":" in entry and not tool):
            raise ToolChoiceError(
                f"no MCP server named {server!r}"
                if server not in known
                else f"{entry!r} names no tool (SERVER:TOOL)",
                remedy="See the servers with `byok-tui mcp list` and their tools with "
                "`byok-tui mcp tools SERVER`; nothing was changed.",
            )
    chosen = () if args.clear else tuple(dict.fromkeys(args.tools))
    store.set_bot_tools(bot.id, chosen)
    print(f"{bot.name} may use: {', '.join(chosen) if chosen else 'no tool'}")
    model = get_provider(bot.config.provider).model(bot.config.model)
    if chosen and model.takes_tools is False:
        print(
            f"Note: {bot.config.model} takes no tools, so none is offered to it; choose a "
            "model that does (`byok-tui bot edit` -m) for them to be used."
        )
    return 0
