"""Protocol families: how a chat or a model list is asked for, and how answers are read.

Each family module offers `chat_call`, `parse_stream`, `models_call` and `parse_models`. They
build plain `HttpCall` descriptions and read an httpx response; they never open connections
(the client does) and never know about Textual.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from byok_tui.errors import ErrorKind
from byok_tui.providers.errors import ProviderError, protocol_error
from byok_tui.providers.registry import Provider

if TYPE_CHECKING:
    import httpx

# A single stream line or event larger than this is not a chat reply: refuse it rather than
# let a broken or hostile server grow our memory without bound.
MAX_EVENT_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class HttpCall:
    method: str
    url: str
    # repr=False: these carry the key (a header, or Gemini's `key` parameter).
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    params: dict[str, str] = field(default_factory=dict, repr=False)
    json: Any = None


def load_json(provider: Provider, data: str) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        raise protocol_error(provider, "the stream carried data that is not valid JSON") from None


def truncated(provider: Provider) -> ProviderError:
    return ProviderError(
        ErrorKind.TRUNCATED,
        f"{provider.display_name}: the reply stopped before it was finished",
        provider=provider,
    )


async def sse_events(
    provider: Provider, response: httpx.Response
) -> AsyncIterator[tuple[str, str]]:
    """(event name, data) for each Server-Sent Event; comments and pings' names pass through.

    httpx-sse splits lines only at CR, LF and CRLF (never at U+2028 inside JSON) and decodes
    UTF-8 incrementally, so events split at any byte boundary are reassembled correctly.
    """
    from httpx_sse import EventSource

    source = EventSource(response)
    async for event in source.aiter_sse():
        if len(event.data) > MAX_EVENT_BYTES:
            raise protocol_error(provider, "the stream sent an event too large to be a reply")
        yield event.event, event.data


async def ndjson_lines(provider: Provider, response: httpx.Response) -> AsyncIterator[str]:
    """Each newline-terminated line (only `\\n` ends a line); bounded in length."""
    buffer = b""
    async for chunk in response.aiter_bytes():
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if line.strip():
                yield _decode_line(provider, line)
        if len(buffer) > MAX_EVENT_BYTES:
            raise protocol_error(provider, "the stream sent a line too long to be a reply")
    if buffer.strip():
        yield _decode_line(provider, buffer)


def _decode_line(provider: Provider, line: bytes) -> str:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        raise protocol_error(provider, "the stream carried text that is not UTF-8") from None


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
