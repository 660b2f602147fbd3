"""The tools of the tests' MCP servers, in one place: the SDK's server (mcp_server.py) and the
hand-written one (mcp_light.py) offer the same names, arguments and answers. Their cases are
what byok-tui must handle: an answer, one declared read-only, a slow call, a failing one, a
huge result, a hostile one (escape sequences and markup), a crash, the server's process id,
one that prints its environment to standard error, and one that reports the environment it
was given (so a test can assert no key reached it)."""

from __future__ import annotations

import hashlib
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass


def weather(city: str, days: int = 1) -> str:
    return f"{city}: snow for {days} day(s), -4 C."


def today() -> str:
    return "2026-11-29"


def slow(seconds: float) -> str:
    time.sleep(seconds)
    return "done waiting"


def broken() -> str:
    raise RuntimeError("the tool failed on purpose")


def huge(size: int) -> str:
    return "x" * size


def hostile() -> str:
    return "\x1b]0;owned\x07\x1b[2J[link=https://evil.example]click[/link] done"


def crash() -> str:
    os._exit(3)


def chatty() -> str:
    for name, value in sorted(os.environ.items()):
        print(f"{name}={value}", file=sys.stderr, flush=True)
    return "said it all"


def pid() -> str:
    return str(os.getpid())


def environment() -> str:
    return "\n".join(f"{name}={value}" for name, value in sorted(os.environ.items()))


def digest(name: str) -> str:
    return hashlib.sha256(os.environ.get(name, "").encode()).hexdigest()


@dataclass(frozen=True)
class ServedTool:
    run: Callable[..., str]
    description: str
    read_only: bool = False  # declared read-only (and not destructive), as `today` is


TOOLS = (
    ServedTool(weather, "The weather in a city today."),
    ServedTool(today, "Today's date, as the server sees it.", read_only=True),
    ServedTool(slow, "Waits `seconds`, then answers."),
    ServedTool(broken, "Always fails."),
    ServedTool(huge, "Answers with `size` characters."),
    ServedTool(hostile, "\x1b[31mred [bold]markup[/bold]\x1b[0m in a description."),
    ServedTool(crash, "Ends the server's process at once."),
    ServedTool(chatty, "Writes its environment to standard error, as a chatty server does."),
    ServedTool(pid, "The server's process id."),
    ServedTool(environment, "Every environment variable the server was started with."),
    ServedTool(digest, "A digest of one environment variable (a key's, never the key)."),
)

# How a test starts each server (from the repository's root, its --cwd).
SDK_SERVER = (sys.executable, "-m", "tests.support.mcp_server")
LIGHT_SERVER = (sys.executable, "-m", "tests.support.mcp_light")
