"""The tools `ask` offers: those of the MCP servers the bot may use (`byok-tui bot tools`),
listed when the message is sent (that starts or contacts each server). `ask` never prompts: a
call runs only when `--allow-tool SERVER:TOOL` (or `SERVER:*`) allows it; any other is
refused and the model told. Every call is said on standard error with its arguments."""

from __future__ import annotations

import sys
from typing import Any

from byok_tui.app_services.tool_box import (
    DENIED,
    Decision,
    ToolAsk,
    bot_toolbox,
    definitions_tokens,
)
from byok_tui.chat.outgoing import ToolBox
from byok_tui.providers.types import RequestRecord, ToolCall, ToolResult
from byok_tui.tools.held import HeldServers

__all__ = ["DENIED", "toolbox_for"]

SHOWN_ARGUMENTS = 2_000  # characters of a call's arguments said on standard error


def allows(allowed: list[str], server: str, tool: str) -> bool:
    return f"{server}:{tool}" in allowed or f"{server}:*" in allowed


def said(text: str) -> None:
    print(f"byok-tui: {text}", file=sys.stderr)


async def toolbox_for(
    services: Any, store: Any, bot: Any, allowed: list[str], held: HeldServers
) -> ToolBox | None:
    """The bot's tools as `ask` offers them, with the runner that obeys --allow-tool; None
    when the bot may use no tool. Its servers are `held` until `ask` ends them."""
    chosen = store.bot_tools(bot.id)
    if not chosen:
        if allowed:
            said(f"{bot.name} may use no tool: --allow-tool is ignored (`byok-tui bot tools`)")
        return None

    async def approve(ask: ToolAsk) -> Decision:
        shown = ask.arguments
        if len(shown) > SHOWN_ARGUMENTS:
            shown = f"{shown[:SHOWN_ARGUMENTS]}... ({len(shown):,} characters)"
        if not allows(allowed, ask.server, ask.tool):
            said(f"tool {ask.server}:{ask.tool} {shown}: denied (allow it with --allow-tool)")
            return "deny"
        said(f"tool {ask.server}:{ask.tool} {shown}: allowed by --allow-tool")
        return "once"

    def record(call: RequestRecord) -> None:
        from byok_tui.spend.request_log import keep_tool_call

        keep_tool_call(store, call)

    # Every key is known to the redaction layer already (ask does it before it sends).
    toolbox = await bot_toolbox(services, chosen, approve, record=record, held=held)
    if toolbox is None or not toolbox.specs:
        return None
    tokens = definitions_tokens(list(toolbox.specs))
    said(f"offering {len(toolbox.specs)} tool(s), about {tokens:,} tokens a turn")
    run = toolbox.run

    async def run_and_say(call: ToolCall) -> ToolResult:
        result = await run(call)
        if result.content != DENIED:
            outcome = "error" if result.is_error else "result"
            said(f"tool {call.name}: {outcome}, {len(result.content):,} characters")
        return result

    return ToolBox(toolbox.specs, run_and_say)
