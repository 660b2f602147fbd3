"""Talking to an MCP server through the official SDK (`mcp`, the `byok-tui[mcp]` extra, imported
only here and only when a server is used): its tools, and one call of one of them.

A server is started or contacted only when asked (a command the user ran, a message a bot
that uses it sends); the app and `ask` hold it for the next call (held.py), a command ends
it with itself: a stdio server runs in its own process group, which the SDK ends whole
(stdin closed, then the tree terminated, then killed). Its standard error goes to a log
file, never to the terminal the app draws on.

What comes back is outside text: tool names and descriptions are cleaned to their line,
results are made terminal-safe, any known key in them is redacted, and a result longer than
the limit is cut with a note saying so; a call that takes longer than its timeout is
abandoned (and the server ended).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from byok_tui.core.errors import ByokError, ErrorKind
from byok_tui.core.redaction import redact_keys
from byok_tui.core.sanitize import clean_line, strip_terminal_controls
from byok_tui.providers.types import ToolResult, ToolSpec
from byok_tui.tools.held import HeldServers
from byok_tui.tools.servers import ToolServer, environment_for, with_keys

LONGEST_DESCRIPTION = 2_000


class ToolServerError(ByokError):
    kind = ErrorKind.NETWORK


@dataclass(frozen=True, slots=True)
class ServerTool:
    """A tool as its server lists it: what a model is offered, and what the server declares
    of it (read-only, destructive), which is shown and never approves a call by itself."""

    spec: ToolSpec
    read_only: bool | None = None
    destructive: bool | None = None


def load_sdk() -> None:
    """Import the SDK's client now (blocking, ~0.5 s: from a thread); absent, nothing
    happens here and the first use says how to install it."""
    with contextlib.suppress(ImportError):
        import mcp.client.stdio
        import mcp.client.streamable_http  # noqa: F401


def sdk_missing() -> ByokError:
    return ByokError(
        "MCP servers need the `mcp` package, which is not installed",
        remedy="Install byok-tui with its MCP extra: pip install 'byok-tui[mcp]' "
        "(from a clone: pip install '.[mcp]').",
    )


@contextlib.asynccontextmanager
async def connected(
    server: ToolServer,
    *,
    environ: Mapping[str, str],
    key_of: Callable[[str], str],
    log: Path,
    timeout: float,
) -> AsyncIterator[Any]:
    """An open SDK client to `server`, ended when the block is left."""
    import anyio

    try:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client
    except ImportError:
        raise sdk_missing() from None
    async with contextlib.AsyncExitStack() as opened:
        if server.url:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            # A key the config names is read from the key store (a keyring may be slow).
            def given() -> dict[str, str]:
                return {name: with_keys(value, key_of) for name, value in server.headers.items()}

            headers = await anyio.to_thread.run_sync(given)
            http = await opened.enter_async_context(
                httpx2.AsyncClient(headers=headers, timeout=timeout)
            )
            transport = streamable_http_client(server.url, http_client=http)
        else:
            errors = opened.enter_context(_server_errors(log))
            env = await anyio.to_thread.run_sync(environment_for, server, environ, key_of)
            parameters = StdioServerParameters(
                command=server.command,
                args=list(server.args),
                env=env,
                cwd=server.cwd,
                encoding_error_handler="replace",
            )
            transport = stdio_client(parameters, errlog=errors)
        try:
            async with Client(transport, read_timeout_seconds=timeout, cache=None) as client:
                yield client
        except ByokError:
            raise
        except (OSError, ValueError) as error:
            raise ToolServerError(
                f"MCP server {server.name}: could not be started or reached "
                f"({type(error).__name__}: {clean_line(str(error))[:200]})",
                remedy=f"Check it with `byok-tui mcp list` and `byok-tui mcp tools {server.name}`.",
            ) from None


LONGEST_LOG_LINE = 64 * 1024


@contextlib.contextmanager
def _server_errors(path: Path) -> Iterator[TextIO]:
    """What a stdio server writes to its standard error goes to the log `path` (private, a
    regular file, appended, never through a symlink), every known key in it redacted: a
    server given a key by its config may well print it. A pipe, copied line by line by a
    thread of its own until the server and byok-tui have both closed it."""
    from byok_tui.core.paths import make_private_dirs, open_private_append

    try:
        make_private_dirs(path.parent)
        log = open_private_append(path)
    except OSError as error:
        raise ToolServerError(f"cannot write the MCP server's log {path}: {error}") from None
    read_end, write_end = os.pipe()

    def copy() -> None:
        with os.fdopen(read_end, "rb") as said, os.fdopen(log, "ab") as kept:
            while line := said.readline(LONGEST_LOG_LINE):
                kept.write(redact_keys(line.decode("utf-8", "replace")).encode("utf-8"))
                kept.flush()

    copier = threading.Thread(target=copy, name="mcp-server-errors", daemon=True)
    copier.start()
    with os.fdopen(write_end, "w", encoding="utf-8") as errors:
        yield errors
    copier.join(timeout=5)


def listed_tools(server: ToolServer, listing: Any) -> list[ServerTool]:
    """The tools a server listed, their names and descriptions made safe to show."""
    found = []
    for tool in listing.tools:
        name = clean_line(str(tool.name))[:128]
        description = strip_terminal_controls(str(tool.description or ""))[:LONGEST_DESCRIPTION]
        schema = tool.input_schema if isinstance(tool.input_schema, dict) else {"type": "object"}
        hints = tool.annotations
        found.append(
            ServerTool(
                ToolSpec(name, redact_keys(description), dict(schema)),
                getattr(hints, "read_only_hint", None),
                getattr(hints, "destructive_hint", None),
            )
        )
    return found


def result_of(call_id: str, name: str, answer: Any, limit: int) -> ToolResult:
    """A call's answer as text for the model: terminal-safe, no known key, at most `limit`
    characters (the model is told when it was cut)."""
    parts = []
    for block in answer.content or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(str(block.text))
        elif kind in ("image", "audio"):
            parts.append(f"[{kind}: {clean_line(str(getattr(block, 'mime_type', '')))}]")
        else:
            parts.append(f"[{clean_line(str(kind)) or 'content'} left out]")
    if not parts and answer.structured_content is not None:
        import json

        parts.append(json.dumps(answer.structured_content, ensure_ascii=False, default=str))
    text = redact_keys(strip_terminal_controls("\n".join(parts)))
    if len(text) > limit:
        text = (
            f"{text[:limit]}\n[byok-tui cut the result here: {len(text) - limit:,} more characters]"
        )
    return ToolResult(call_id, name, text, bool(answer.is_error))


async def list_tools(
    server: ToolServer, *, held: HeldServers | None = None, **connect: Any
) -> list[ServerTool]:
    """Start or contact the server (or use it as `held`) and list its tools."""
    import anyio

    timeout = connect["timeout"]
    try:
        with anyio.fail_after(timeout):
            listing = await _with_client(
                server, held, connect, lambda c: c.list_tools(), again=True
            )
        return listed_tools(server, listing)
    except TimeoutError:
        raise ToolServerError(
            f"MCP server {server.name} did not list its tools within {timeout:g} s"
        ) from None
    except ByokError:
        raise
    except Exception as error:  # the SDK's own errors: said in a line, never a traceback
        raise _failed(server, error) from None


async def call_tool(
    server: ToolServer,
    call_id: str,
    name: str,
    arguments: dict[str, Any],
    *,
    limit: int,
    held: HeldServers | None = None,
    **connect: Any,
) -> ToolResult:
    """Run one call (on the server as `held`, or one started for it); its result, or an
    error result saying why there is none (the model is told, and the reply goes on).
    Raises only when cancelled."""
    import anyio

    timeout = connect["timeout"]
    try:
        with anyio.fail_after(timeout):
            answer = await _with_client(
                server, held, connect, lambda c: c.call_tool(name, arguments)
            )
        return result_of(call_id, name, answer, limit)
    except TimeoutError:
        said = f"the tool did not answer within {timeout:g} s"
        if held is not None:
            said += f"; {server.name} was ended, and is started again at its next use"
    except ByokError as error:
        said = error.message
    except Exception as error:
        said = _failed(server, error).message
    return ToolResult(call_id, name, redact_keys(said), is_error=True)


async def _with_client(
    server: ToolServer,
    held: HeldServers | None,
    connect: dict[str, Any],
    work: Callable[[Any], Awaitable[Any]],
    *,
    again: bool = False,
) -> Any:
    if held is None:
        async with connected(server, **connect) as client:
            return await work(client)
    opener = functools.partial(connected, **connect)
    keys = ""
    if server.keys_named():  # read as `connected` reads them (a keyring may be slow)
        import anyio

        keys = await anyio.to_thread.run_sync(keys_digest, server, connect["key_of"])
    return await held.use(server, opener, work, _answered, again=again, keys=keys)


def keys_digest(server: ToolServer, key_of: Callable[[str], str]) -> str:
    """A digest of the stored keys `server` is given, as they are now: a held server whose
    key changed since it started is started again with the new one. Never a key itself."""
    import hashlib

    digest = hashlib.sha256()
    for provider in server.keys_named():
        try:
            digest.update(key_of(provider).encode() + b"\0")
        except ByokError:
            digest.update(b"\1")  # none now: starting it says so
    return digest.hexdigest()


def _answered(error: BaseException) -> bool:
    """The server answered the request with an error of its own: it is alive and well."""
    try:
        from mcp.shared.exceptions import MCPError
        from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT
    except ImportError:
        return False
    return isinstance(error, MCPError) and error.code not in (CONNECTION_CLOSED, REQUEST_TIMEOUT)


def _closed(error: BaseException) -> bool:
    try:
        from mcp.shared.exceptions import MCPError
        from mcp.types import CONNECTION_CLOSED
    except ImportError:
        return False
    return isinstance(error, MCPError) and error.code == CONNECTION_CLOSED


def _failed(server: ToolServer, error: BaseException) -> ToolServerError:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if _closed(error):
        return ToolServerError(
            f"MCP server {server.name} stopped (its process ended or it closed the "
            "connection); it is started again at its next use",
            remedy="A stdio server's own messages are in byok-tui's log folder, mcp-NAME.log.",
        )
    said = redact_keys(clean_line(str(error)))[:200]
    return ToolServerError(
        f"MCP server {server.name}: {type(error).__name__}" + (f": {said}" if said else ""),
        remedy="Is it running, and are its command or address right? See `byok-tui mcp list`; "
        "a stdio server's own messages are in byok-tui's log folder, mcp-NAME.log.",
    )
