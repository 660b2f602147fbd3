"""A real MCP server over stdio, written by hand, with the tools of tests/support/mcp_tools.py:
`python -m tests.support.mcp_light`. It speaks what the SDK's client asks of a tools server
(initialize, tools/list, tools/call, ping: newline-delimited JSON-RPC 2.0) and starts in
~0.05 s of CPU, where the SDK's server takes ~1 s. Tests of byok-tui's use of tools run it;
tests of the protocol itself run the SDK's (mcp_server.py), so a drift of the protocol is
still caught there."""

from __future__ import annotations

import inspect
import json
import sys
import typing
from typing import Any

from tests.support.mcp_tools import TOOLS, ServedTool

JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}
METHOD_NOT_FOUND = -32601


def listed(tool: ServedTool) -> dict[str, Any]:
    hints = typing.get_type_hints(tool.run)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, parameter in inspect.signature(tool.run).parameters.items():
        properties[name] = {"type": JSON_TYPES[hints[name]]}
        if parameter.default is inspect.Parameter.empty:
            required.append(name)
        else:
            properties[name]["default"] = parameter.default
    entry: dict[str, Any] = {
        "name": tool.run.__name__,
        "description": tool.description,
        "inputSchema": {"type": "object", "properties": properties, "required": required},
    }
    if tool.read_only:
        entry["annotations"] = {"readOnlyHint": True, "destructiveHint": False}
    return entry


def called(params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    tool = next((tool for tool in TOOLS if tool.run.__name__ == name), None)
    if tool is None:
        return _text(f"Unknown tool: {name}", error=True)
    try:
        return _text(tool.run(**params.get("arguments", {})), error=False)
    except Exception:
        return _text(f"Error executing tool {name}", error=True)  # as the SDK's server says


def _text(text: str, *, error: bool) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": error}


def answer(request: dict[str, Any]) -> dict[str, Any]:
    method, params = request["method"], request.get("params", {})
    if method == "initialize":
        return {
            "protocolVersion": params["protocolVersion"],
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "byok-test-tools-light", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": [listed(tool) for tool in TOOLS]}
    if method == "tools/call":
        return called(params)
    if method == "ping":
        return {}
    raise LookupError(method)


def serve() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:
            continue  # a notification (initialized, cancelled): nothing to answer
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
        try:
            reply["result"] = answer(request)
        except LookupError:
            reply["error"] = {"code": METHOD_NOT_FOUND, "message": "Method not found"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
