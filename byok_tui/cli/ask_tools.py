"""The tools `ask` offers: those of the MCP servers the bot may use (`byok-tui bot tools`),
listed when the message is sent (that starts or contacts each server). `ask` never prompts: a
call runs only when `--allow-tool SERVER:TOOL` (or `SERVER:*`) allows it; any other is
refused and the model told. Every call is said on standard error with its arguments."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from byok_tui.chat.outgoing import ToolBox
from byok_tui.core.redaction import redact_keys
from byok_tui.core.sanitize import strip_terminal_controls
from byok_tui.providers.types import ToolCall, ToolResult, ToolSpec

DENIED = "The user did not allow this tool call. Answer without it, or say what you need."
SHOWN_ARGUMENTS = 2_000  # characters of a call's arguments said on standard error


def offered_name(server: str, tool: str) -> str:
    """The name a model sees: the server's and the tool's, as every API accepts a name."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"{server}_{tool}")[:64]


def allows(allowed: list[str], server: str, tool: str) -> bool:
    return f"{server}:{tool}" in allowed or f"{server}:*" in allowed


def said(text: str) -> None:
    print(f"byok-tui: {text}", file=sys.stderr)


async def toolbox_for(services: Any, store: Any, bot: Any, allowed: list[str]) -> ToolBox | None:
    """The bot's tools as `ask` offers them, with the runner that obeys --allow-tool; None
    when the bot may use no tool."""
    from byok_tui.app_services.services import remember_every_key
    from byok_tui.cli.mcp import key_of_stored
    from byok_tui.spend.estimate import estimated_tokens
    from byok_tui.tools.client import call_tool, list_tools
    from byok_tui.tools.servers import call_timeout, find_server, result_limit

    chosen = store.bot_tools(bot.id)
    if not chosen:
        if allowed:
            said(f"{bot.name} may use no tool: --allow-tool is ignored (`byok-tui bot tools`)")
        return None
    remember_every_key(services, store)  # before a server's words are shown or sent on
    wanted: dict[str, set[str] | None] = {}  # a server: its tools chosen (None: all)
    for entry in chosen:
        server, _, tool = entry.partition(":")
        tools = wanted.get(server, set())
        if not tool:
            wanted[server] = None
        elif tools is not None:
            wanted[server] = tools | {tool}
    specs: list[ToolSpec] = []
    where: dict[str, tuple[Any, str, dict[str, Any]]] = {}  # offered name: server, tool, connect
    for name, tools in wanted.items():
        server = find_server(services.config, name)
        connect = {
            "environ": services.environ,
            "key_of": key_of_stored(services),
            "log": services.paths.log_dir / f"mcp-{server.name}.log",
            "timeout": call_timeout(services.config, server),
        }
        for tool in await list_tools(server, **connect):
            if tools is not None and tool.spec.name not in tools:
                continue
            offered = offered_name(server.name, tool.spec.name)
            specs.append(ToolSpec(offered, tool.spec.description, tool.spec.input_schema))
            where[offered] = (server, tool.spec.name, connect)
    if not specs:
        return None
    size = estimated_tokens(
        [json.dumps([s.input_schema for s in specs]), *(s.description for s in specs)]
    )
    said(f"offering {len(specs)} tool(s), about {size:,} tokens a turn")
    limit = result_limit(services.config)

    async def run(call: ToolCall) -> ToolResult:
        found = where.get(call.name)
        if found is None:  # checked already: not offered
            return ToolResult(call.id, call.name, "There is no such tool.", True)
        server, tool, connect = found
        shown = redact_keys(strip_terminal_controls(call.raw_arguments or "{}"))
        if len(shown) > SHOWN_ARGUMENTS:
            shown = f"{shown[:SHOWN_ARGUMENTS]}... ({len(shown):,} characters)"
        if not allows(allowed, server.name, tool):
            said(f"tool {server.name}:{tool} {shown}: denied (allow it with --allow-tool)")
            return ToolResult(call.id, call.name, DENIED, True)
        said(f"tool {server.name}:{tool} {shown}: allowed by --allow-tool")
        result = await call_tool(
            server, call.id, tool, call.arguments or {}, limit=limit, **connect
        )
        outcome = "error" if result.is_error else "result"
        said(f"tool {server.name}:{tool}: {outcome}, {len(result.content):,} characters")
        return ToolResult(call.id, call.name, result.content, result.is_error)

    return ToolBox(tuple(specs), run)
