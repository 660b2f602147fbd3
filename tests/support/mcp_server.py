"""A real MCP server, written with the official SDK, for the tests: run as
`python -m tests.support.mcp_server` it speaks stdio; with `--http PORT` streamable HTTP on
127.0.0.1. Its tools are tests/support/mcp_tools.py's. It takes ~1 s of CPU to start (the
SDK's imports): tests of the protocol itself use it, the others the hand-written server of
the same tools (mcp_light.py)."""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

from tests.support.mcp_tools import TOOLS

server = MCPServer("byok-test-tools")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False)
for tool in TOOLS:
    declared = READ_ONLY if tool.read_only else None
    server.tool(description=tool.description, annotations=declared)(tool.run)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
