"""The tools a bot may use, as a toolbox for its next message: listed from its MCP servers
(which starts or contacts them: only when a message is sent), each call run only once the
approver allows it.

The approver decides, never the model and never the server: `ask` allows only what
--allow-tool names, the app asks the user (unless a tool was pre-approved in config.toml or
allowed always for the bot). What the user is shown of a call (its arguments) is outside
text: sanitised and redacted here, before anyone sees it.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from byok_tui.chat.outgoing import DENIED, ListTools, ToolBox
from byok_tui.core.errors import ByokError
from byok_tui.core.redaction import redact_keys
from byok_tui.core.sanitize import strip_terminal_controls
from byok_tui.providers.types import RequestRecord, ToolCall, ToolResult, ToolSpec

if TYPE_CHECKING:
    from byok_tui.tools.held import HeldServers

__all__ = ["DENIED", "Approve", "Decision", "ToolAsk", "bot_toolbox", "tools_asking"]


Decision = Literal["once", "always", "deny"]

_calls = itertools.count()  # each call's record is a write of its own

# What the tools' definitions of each choice of tools came to, once listed in this process:
# the composer's estimate counts them (listing them for an estimate would start servers).
_listed_tokens: dict[tuple[str, ...], int] = {}


@dataclass(frozen=True, slots=True)
class ToolAsk:
    """A call the model asked for, as the user is shown it before it runs."""

    server: str
    tool: str
    arguments: str
    """The arguments as the model wrote them: control characters removed, keys redacted."""
    read_only: bool | None = None
    """What the server declares of the tool (shown; it never approves anything by itself)."""
    destructive: bool | None = None
    keys_given: tuple[str, ...] = ()
    """The providers whose stored key the server's own config gives it."""
    pre_approved: bool = False
    """Pre-approved in config.toml (`allow`) or allowed always for the bot: runs unasked."""


Approve = Callable[[ToolAsk], Awaitable[Decision]]


def offered_name(server: str, tool: str) -> str:
    """The name a model sees: the server's and the tool's, as every API accepts a name."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"{server}_{tool}")[:64]


def shown_arguments(call: ToolCall) -> str:
    return redact_keys(strip_terminal_controls(call.raw_arguments or "{}"))


def tools_in_estimate(chosen: tuple[str, ...], config: Any) -> tuple[int, str]:
    """What the bot's tools add to the composer's estimate: tokens, and words to say so."""
    from byok_tui.core.registry import get_provider
    from byok_tui.spend.estimate import count_tokens

    if not chosen:
        return 0, ""
    if get_provider(config.provider).model(config.model).takes_tools is False:
        return 0, f" · {config.model} takes no tools"
    tokens = _listed_tokens.get(chosen)
    if tokens is None:
        return 0, " · tools: counted once listed (at the next send)"
    return tokens, f" · tools ≈ {count_tokens(tokens)} a turn"


def definitions_tokens(specs: list[ToolSpec]) -> int:
    """About how many tokens the tools' definitions add to every request of the message."""
    from byok_tui.spend.estimate import estimated_tokens

    schemas = json.dumps([spec.input_schema for spec in specs])
    return estimated_tokens([schemas, *(f"{s.name} {s.description}" for s in specs)])


async def bot_toolbox(
    services: Any,
    chosen: tuple[str, ...],
    approve: Approve,
    *,
    pre_approved: tuple[str, ...] = (),
    strict: bool = True,
    record: Callable[[RequestRecord], None] | None = None,
    held: HeldServers | None = None,
) -> ToolBox | None:
    """The tools `chosen` for a bot (`server` or `server:tool` entries), listed now, and
    the runner that asks `approve` before every call. `pre_approved`: `server:tool` entries
    the user allowed always. A server that cannot be listed fails the whole send when
    `strict` (`ask`), else it is left out and the toolbox's notices say why (the app).
    `record`: told of each call as the request log keeps it; `held`: the servers kept
    running between calls (without it, each listing and call starts its server anew). None
    when nothing is chosen.
    Every key the user has must be known to the redaction layer before (a blocking read:
    services.remember_every_key), so that none in what a server says is shown or sent on."""
    from byok_tui.tools.client import ServerTool, call_tool, list_tools
    from byok_tui.tools.servers import find_server, result_limit

    if not chosen:
        return None
    wanted: dict[str, set[str] | None] = {}  # a server: its tools chosen (None: all)
    for entry in chosen:
        server_name, _, tool_name = entry.partition(":")
        tools = wanted.get(server_name, set())
        if not tool_name:
            wanted[server_name] = None
        elif tools is not None:
            wanted[server_name] = tools | {tool_name}
    specs: list[ToolSpec] = []
    notices: list[str] = []
    where: dict[str, tuple[Any, ServerTool, dict[str, Any]]] = {}
    for name, tools in wanted.items():
        try:
            server = find_server(services.config, name)
            connect = connection(services, server)
            listed = await list_tools(server, held=held, **connect)
        except ByokError as error:
            if strict:
                raise
            notices.append(f"The tools of {name} were not offered: {error.one_line()}")
            continue
        for tool in listed:
            if tools is not None and tool.spec.name not in tools:
                continue
            offered = offered_name(server.name, tool.spec.name)
            if offered in where:  # two tools that read the same to a model: the first only
                notices.append(f"{server.name}:{tool.spec.name} was not offered: its name is taken")
                continue
            specs.append(ToolSpec(offered, tool.spec.description, tool.spec.input_schema))
            where[offered] = (server, tool, connect)
    if not specs and not notices:
        return None
    _listed_tokens[chosen] = definitions_tokens(specs)
    limit = result_limit(services.config)

    async def run(call: ToolCall) -> ToolResult:
        found = where.get(call.name)
        if found is None:  # checked already: not offered
            return ToolResult(call.id, call.name, "There is no such tool.", True)
        server, tool, connect = found
        ask = ToolAsk(
            server.name,
            tool.spec.name,
            shown_arguments(call),
            tool.read_only,
            tool.destructive,
            server.keys_named(),
            tool.spec.name in server.allow or f"{server.name}:{tool.spec.name}" in pre_approved,
        )
        if await approve(ask) == "deny":
            if record is not None:
                record(tool_call_record(server, tool.spec.name, time.time(), 0.0, "denied", 0))
            return ToolResult(call.id, call.name, DENIED, True)
        started, clock = time.time(), time.monotonic()
        result = await call_tool(
            server, call.id, tool.spec.name, call.arguments or {}, limit=limit, held=held, **connect
        )
        if record is not None:
            took, size = time.monotonic() - clock, len(result.content)
            outcome = "error" if result.is_error else "ok"
            record(tool_call_record(server, tool.spec.name, started, took, outcome, size))
        return ToolResult(call.id, call.name, result.content, result.is_error)

    return ToolBox(tuple(specs), run, notices=tuple(notices))


def tools_asking(
    context: Any,
    bot_id: int,
    settled: Callable[[], None],
    submit: Callable[[str, str, Callable[[], object]], None],
    ask_user: Approve,
) -> ListTools:
    """The app's tools for a bot's message, listed once it is stored. A call runs unasked
    only when pre-approved in config.toml or allowed always for the bot; else `ask_user`
    decides, and an "always" is kept (queued on the writer with `submit`; `settled` waits
    for the writes before, so that a choice just saved is the one read)."""
    store = context.db
    allowed_now: set[str] = set()

    async def approve(ask: ToolAsk) -> Decision:
        name = f"{ask.server}:{ask.tool}"
        if ask.pre_approved or name in allowed_now:
            return "once"
        decision = await ask_user(ask)
        if decision == "always":
            allowed_now.add(name)
            write = functools.partial(store.approve_tool, bot_id, name)
            submit(f"approve:{bot_id}:{name}", "remember the tool's approval", write)
        return decision

    def read() -> tuple[tuple[str, ...], tuple[str, ...]]:
        """In a thread: the bot's choices, every key known to the redaction layer, and the
        SDK loaded (~0.5 s of imports the event loop would otherwise wait for)."""
        from byok_tui.app_services.services import remember_every_key
        from byok_tui.tools.client import load_sdk

        settled()
        chosen = store.bot_tools(bot_id)
        if chosen:
            remember_every_key(context.services, store)
            load_sdk()
        return chosen, store.approved_tools(bot_id)

    def record(call: RequestRecord) -> None:
        from byok_tui.spend.request_log import keep_tool_call

        write = functools.partial(keep_tool_call, store, call)
        submit(f"tool-call:{next(_calls)}", "record the tool call", write)

    async def listed() -> ToolBox | None:
        chosen, approved = await asyncio.to_thread(read)
        return await bot_toolbox(
            context.services,
            chosen,
            approve,
            pre_approved=approved,
            strict=False,
            record=record,
            held=context.tool_servers,
        )

    return listed


async def list_servers(context: Any, names: tuple[str, ...]) -> dict[str, tuple[str, ...] | str]:
    """Each of these servers' tools by name, or why they could not be listed, the servers
    listed together; they are held for the next message. Every key is known to the
    redaction layer first (what a server says is outside text)."""
    from byok_tui.app_services.services import remember_every_key
    from byok_tui.tools.client import list_tools, load_sdk
    from byok_tui.tools.servers import find_server

    def prepare() -> None:
        remember_every_key(context.services, context.db)
        load_sdk()

    await asyncio.to_thread(prepare)

    async def listed(name: str) -> tuple[str, ...] | str:
        try:
            server = find_server(context.services.config, name)
            connect = connection(context.services, server)
            tools = await list_tools(server, held=context.tool_servers, **connect)
        except ByokError as error:
            return error.one_line()
        return tuple(tool.spec.name for tool in tools)

    found = await asyncio.gather(*(listed(name) for name in names))
    return dict(zip(names, found, strict=True))


def tool_call_record(
    server: Any, tool: str, started: float, took: float, outcome: str, size: int
) -> RequestRecord:
    """A tool call as the request log keeps it: the server, the tool, the keys its config
    gives it (by provider), how it ended and how long its result was; never its arguments."""
    keys = server.keys_named()
    return RequestRecord(
        started=started,
        provider="mcp",
        purpose="tool call",
        method="CALL",
        host=server.name,
        path=f"/{tool} → {size:,} characters",
        key_source=f"key of {', '.join(keys)}" if keys else "no key",
        key_last4=None,
        outcome=outcome,
        duration_s=took,
    )


def connection(services: Any, server: Any) -> dict[str, Any]:
    """How a server is started or contacted: the environment its allow-list is taken from,
    the only stored keys it may get (those its config names), its log, its timeout."""
    from byok_tui.app_services.services import key_of_stored
    from byok_tui.tools.servers import call_timeout

    return {
        "environ": services.environ,
        "key_of": key_of_stored(services),
        "log": services.paths.log_dir / f"mcp-{server.name}.log",
        "timeout": call_timeout(services.config, server),
    }
