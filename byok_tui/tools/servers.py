"""MCP servers as the user configured them: `[mcp.servers.<name>]` in config.toml.

A stdio server: `command`, `args`, `env`, `cwd`; a streamable HTTP one: `url`, `headers`;
either may set `timeout` (seconds a call may take) and `allow` (its tools whose calls the app
runs without asking: pre-approved by the user, never by the server). A value in `env` or
`headers` may be a reference to one of the user's stored keys, `{key:PROVIDER}`: the only way
a key reaches a tool server, and `mcp list` shows the reference, never the key.

Reading and writing the file only: nothing here starts or contacts a server.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from byok_tui.core.config import (
    Config,
    ConfigError,
    add_table,
    read_document,
    write_document,
)
from byok_tui.core.sanitize import clean_line

NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
KEY_REFERENCE = re.compile(r"\{key:([a-z0-9][a-z0-9_-]{0,39})\}")
DEFAULT_CALL_TIMEOUT = 60.0
DEFAULT_RESULT_LIMIT = 100_000  # characters of a tool's result kept and sent to the model
# What a stdio server gets of the user's environment, whatever else it holds: no provider
# key, no *_API_KEY or *_TOKEN. Its own config adds what it needs, by name.
PASSED_ENVIRONMENT = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LC_ALL",
    "TERM",
    "TMPDIR",
)


@dataclass(frozen=True, slots=True)
class ToolServer:
    """One configured server (`command` for stdio, `url` for streamable HTTP)."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float | None = None
    allow: tuple[str, ...] = ()
    """Tools whose calls run without asking (in the app; `ask` obeys only --allow-tool)."""

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    def keys_named(self) -> tuple[str, ...]:
        """The providers whose stored key this server is given, by its own config."""
        found = [
            match.group(1)
            for value in (*self.env.values(), *self.headers.values())
            for match in KEY_REFERENCE.finditer(value)
        ]
        return tuple(dict.fromkeys(found))

    def describe(self) -> str:
        """One line for `mcp list`: what runs or is contacted, and what it is given (names of
        variables and headers; a key only as its reference)."""
        where = self.url if self.url else " ".join((self.command, *self.args))
        given = [f"env {name}" for name in self.env] + [f"header {name}" for name in self.headers]
        keys = [f"key of {provider}" for provider in self.keys_named()]
        extra = f" (given: {', '.join(given + keys)})" if given or keys else ""
        allowed = f"; runs unasked: {', '.join(self.allow)}" if self.allow else ""
        return clean_line(f"{self.name} {self.transport} {where}{extra}{allowed}")

    def table(self) -> dict[str, Any]:
        """As written to the config file."""
        table: dict[str, Any] = {}
        if self.url:
            table["url"] = self.url
            if self.headers:
                table["headers"] = dict(self.headers)
        else:
            table["command"] = self.command
            if self.args:
                table["args"] = list(self.args)
            if self.env:
                table["env"] = dict(self.env)
            if self.cwd:
                table["cwd"] = self.cwd
        if self.timeout is not None:
            table["timeout"] = self.timeout
        if self.allow:
            table["allow"] = list(self.allow)
        return table


def _strings(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ConfigError(f"{what} must be a table of strings")
    return dict(value)


def parse_server(name: str, raw: Any, where: str) -> ToolServer:
    """One `[mcp.servers.<name>]` table, checked; ConfigError says what is wrong."""
    what = f"{where}: mcp.servers.{name}"
    if not NAME.fullmatch(name):
        raise ConfigError(f"{what}: a name is letters, digits, '-' and '_' (up to 40)")
    if not isinstance(raw, dict):
        raise ConfigError(f"{what} must be a table")
    url, command = raw.get("url", ""), raw.get("command", "")
    if not isinstance(url, str) or not isinstance(command, str) or bool(url) == bool(command):
        raise ConfigError(f"{what}: give either `command` (stdio) or `url` (streamable HTTP)")
    if url and not re.match(r"https?://[^\s/]+", url):
        raise ConfigError(f"{what}.url must be an http:// or https:// address")
    args = raw.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(f"{what}.args must be a list of strings")
    cwd = raw.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ConfigError(f"{what}.cwd must be a string")
    timeout = raw.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0
    ):
        raise ConfigError(f"{what}.timeout must be a number of seconds above 0")
    allow = raw.get("allow", [])
    if not isinstance(allow, list) or not all(isinstance(a, str) for a in allow):
        raise ConfigError(f"{what}.allow must be a list of the server's tool names")
    return ToolServer(
        name,
        command,
        tuple(args),
        _strings(raw.get("env"), f"{what}.env"),
        cwd,
        url,
        _strings(raw.get("headers"), f"{what}.headers"),
        float(timeout) if timeout is not None else None,
        tuple(clean_line(a) for a in allow),
    )


def configured_servers(config: Config) -> list[ToolServer]:
    section = config.data.get("mcp", {})
    servers = section.get("servers", {}) if isinstance(section, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(f"{config.path}: [mcp.servers] must be a table")
    return [parse_server(name, raw, str(config.path)) for name, raw in servers.items()]


def find_server(config: Config, name: str) -> ToolServer:
    for server in configured_servers(config):
        if server.name == name:
            return server
    raise ConfigError(f"no MCP server named {name!r}", remedy="See them with `byok-tui mcp list`.")


def call_timeout(config: Config, server: ToolServer) -> float:
    """Seconds a call may take: the server's own `timeout`, else `[mcp] call_timeout_seconds`
    (default 60)."""
    if server.timeout is not None:
        return server.timeout
    section = config.data.get("mcp", {})
    value = (
        section.get("call_timeout_seconds", DEFAULT_CALL_TIMEOUT)
        if isinstance(section, dict)
        else DEFAULT_CALL_TIMEOUT
    )
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"{config.path}: mcp.call_timeout_seconds must be a number above 0")
    return float(value)


def result_limit(config: Config) -> int:
    """Characters of a tool's result kept (`[mcp] result_limit`, default 100,000)."""
    section = config.data.get("mcp", {})
    value = (
        section.get("result_limit", DEFAULT_RESULT_LIMIT)
        if isinstance(section, dict)
        else DEFAULT_RESULT_LIMIT
    )
    if isinstance(value, bool) or not isinstance(value, int) or value < 1_000:
        raise ConfigError(f"{config.path}: mcp.result_limit must be a whole number, 1000 or more")
    return value


def add_server(path: Path, server: ToolServer) -> None:
    parse_server(server.name, server.table(), str(path))
    taken = (
        f"{path}: mcp.servers.{server.name} exists already; remove it first "
        f"(`byok-tui mcp rm {server.name}`)"
    )
    add_table(path, ("mcp", "servers"), server.name, server.table(), taken)


def remove_server(path: Path, name: str) -> None:
    document = read_document(path)
    servers = (document.get("mcp") or {}).get("servers")
    if servers is None or name not in servers:
        raise ConfigError(f"{path} has no MCP server named {name!r}")
    del servers[name]
    write_document(path, document)


def environment_for(
    server: ToolServer, environ: Mapping[str, str], key_of: Callable[[str], str]
) -> dict[str, str]:
    """What a stdio server is started with: the few variables every program needs, then the
    ones its own config names, a key reference replaced by the stored key it names."""
    passed = {name: environ[name] for name in PASSED_ENVIRONMENT if name in environ}
    return passed | {name: with_keys(value, key_of) for name, value in server.env.items()}


def with_keys(value: str, key_of: Callable[[str], str]) -> str:
    return KEY_REFERENCE.sub(lambda match: key_of(match.group(1)), value)
