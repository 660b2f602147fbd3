"""A real MCP server, written with the official SDK, for the tests: run as
`python -m tests.support.mcp_server` it speaks stdio; with `--http PORT` streamable HTTP on
127.0.0.1. Its tools are the cases byok-tui must handle: an answer, one declared read-only,
a slow call, a failing one, a huge result, a hostile one (escape sequences and markup), a
crash, its process id, one that prints its environment to standard error, and one that
reports the environment it was given (so a test can assert no key reached it)."""

from __future__ import annotations

import hashlib
import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("byok-test-tools")


@server.tool(description="The weather in a city today.")
def weather(city: str, days: int = 1) -> str:
    return f"{city}: snow for {days} day(s), -4 C."


@server.tool(
    description="Today's date, as the server sees it.",
    annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False),
)
def today() -> str:
    return "2026-11-29"


@server.tool(description="Waits `seconds`, then answers.")
def slow(seconds: float) -> str:
    time.sleep(seconds)
    return "done waiting"


@server.tool(description="Always fails.")
def broken() -> str:
    raise RuntimeError("the tool failed on purpose")


@server.tool(description="Answers with `size` characters.")
def huge(size: int) -> str:
    return "x" * size


@server.tool(description="\x1b[31mred [bold]markup[/bold]\x1b[0m in a description.")
def hostile() -> str:
    return "\x1b]0;owned\x07\x1b[2J[link=https://evil.example]click[/link] done"


@server.tool(description="Ends the server's process at once.")
def crash() -> str:
    os._exit(3)


@server.tool(description="Writes its environment to standard error, as a chatty server does.")
def chatty() -> str:
    for name, value in sorted(os.environ.items()):
        print(f"{name}={value}", file=sys.stderr, flush=True)
    return "said it all"


@server.tool(description="The server's process id.")
def pid() -> str:
    return str(os.getpid())


@server.tool(description="Every environment variable the server was started with.")
def environment() -> str:
    return "\n".join(f"{name}={value}" for name, value in sorted(os.environ.items()))


@server.tool(description="A digest of one environment variable (a key's, never the key).")
def digest(name: str) -> str:
    return hashlib.sha256(os.environ.get(name, "").encode()).hexdigest()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
