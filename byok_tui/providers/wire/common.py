"""What every protocol family shares: the HTTP call it describes, the stream bounds, the key's
place in a request, and the readers of a streamed body. Imports no family."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from byok_tui.core.errors import ErrorKind
from byok_tui.core.registry import Model, Provider
from byok_tui.providers.errors import ProviderError, protocol_error
from byok_tui.providers.types import (
    ChatMessage,
    ChatRequest,
    ListedModel,
    StreamEvent,
    ToolSpec,
)

# Bounds that no real chat reply comes near, so that a broken or hostile server cannot grow
# memory without bound or hold a stream open forever.
MAX_EVENT_BYTES = 4 * 1024 * 1024  # one SSE event or NDJSON line
MAX_STREAM_BYTES = 32 * 1024 * 1024  # one whole stream, keep-alive comments included
MAX_STREAM_SECONDS = 30 * 60.0
MAX_REPLY_CHARS = 2_000_000  # text and reasoning of one reply

# At a model's pace each token arrives on its own, and each wait for one through the HTTP
# stack costs ~0.2 ms of CPU (async httpx; its blocking client a third of that). When the
# reader had to wait for its last piece (it is reading as fast as text comes), it waits this
# long before asking for more and takes what came meanwhile, four tokens or so at once. Text
# is drawn ten times a second, so none appears later for it; text already waiting (a burst)
# is read on without a pause.
GATHER_SECONDS = 0.02
WAITED_SECONDS = 0.001  # a piece that took longer than this to come was not waiting
LIVE_SECONDS = 0.1  # two waits this close: the stream comes at a model's pace


@dataclass(frozen=True, slots=True)
class HttpCall:
    method: str
    url: str
    # repr=False: these carry the key (a header, or Gemini's `key` parameter).
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    params: dict[str, str] = field(default_factory=dict, repr=False)
    json: Any = None


class StreamBody(Protocol):
    """What a family reads a streamed reply through: an httpx response, or the client's
    ResponseBody (the same two methods), which reads on after the family stops."""

    def aiter_text(self) -> AsyncIterator[str]: ...

    def aiter_bytes(self) -> AsyncIterator[bytes]: ...


class WireFamily(Protocol):
    """What every protocol family offers (a module satisfies it)."""

    def chat_call(
        self, provider: Provider, base_url: str, key: str, chat: ChatRequest, model: Model
    ) -> HttpCall: ...

    def parse_stream(
        self, provider: Provider, response: StreamBody, tools: tuple[ToolSpec, ...] = ()
    ) -> AsyncIterator[StreamEvent]: ...

    def models_call(self, provider: Provider, base_url: str, key: str | None) -> HttpCall: ...

    def parse_models(self, provider: Provider, data: Any) -> list[ListedModel]: ...


def carry_key(provider: Provider, key: str | None) -> tuple[dict[str, str], dict[str, str]]:
    """The headers and query parameters that carry `key`, where the registry's `key_carrier`
    says it goes; none at all without a key, or for a provider that takes none."""
    if not key or provider.key_carrier == "none":
        return {}, {}
    place, _, name = provider.key_carrier.partition(":")
    if place == "query":
        return {}, {name: key}
    if name == "authorization-bearer":
        return {"authorization": f"Bearer {key}"}, {}
    return {name: key}, {}


# Sent after a cut reply to the families that cannot be handed the start of their answer
# (all but Anthropic's): what the model is asked so that it writes only what comes next.
CONTINUE_INSTRUCTION = (
    "Your last reply was cut off. Continue it from exactly where it stopped: do not repeat "
    "anything already written, and do not comment on the continuation."
)


def prefills(provider: Provider) -> bool:
    """Whether `provider` takes a cut reply as the start of its answer (Anthropic's
    prefill), rather than needing an instruction to continue it."""
    return provider.family == "anthropic-messages"


def turns(chat: ChatRequest) -> tuple[ChatMessage, ...]:
    """The conversation to send: a cut reply to continue is followed by the instruction."""
    if chat.continues:
        return (*chat.messages, ChatMessage("user", CONTINUE_INSTRUCTION))
    return chat.messages


def chat_messages(
    chat: ChatRequest,
    image_fields: Callable[[ChatMessage], dict[str, Any]] | None = None,
    tool_turn: Callable[[ChatMessage], list[dict[str, Any]]] | None = None,
) -> list[dict[str, Any]]:
    """The conversation as role/content messages, the system prompt first: the shape the
    OpenAI-compatible and Ollama APIs share. `image_fields`: the fields but its role of a
    message with images, in the family's format (without it, images are not sent).
    `tool_turn`: the messages, in the family's format, of a turn that called tools or
    answers them (without it, only their text is sent)."""
    messages = [{"role": "system", "content": chat.system}] if chat.system else []
    sent = turns(chat)
    if tool_turn is not None and any(m.tool_calls or m.tool_results for m in sent):
        for m in sent:
            if m.tool_calls or m.tool_results:
                messages += tool_turn(m)
            else:
                messages.append(_plain(m, image_fields))
        return messages
    # One dict a message, made in one step: a long history is thousands of them, made
    # between Enter and the request.
    messages += [
        {"role": m.role, **image_fields(m)}
        if m.images and image_fields
        else {"role": m.role, "content": m.content}
        for m in sent
    ]
    return messages


def _plain(
    message: ChatMessage, image_fields: Callable[[ChatMessage], dict[str, Any]] | None
) -> dict[str, Any]:
    if message.images and image_fields:
        return {"role": message.role, **image_fields(message)}
    return {"role": message.role, "content": message.content}


def load_json(provider: Provider, data: str) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        raise protocol_error(provider, "the stream carried data that is not valid JSON") from None


def load_object(provider: Provider, data: str) -> dict[str, Any]:
    """One stream event's JSON, which every family sends as an object."""
    value = load_json(provider, data)
    if not isinstance(value, dict):
        raise protocol_error(provider, "the stream carried something other than a JSON object")
    return value


def truncated(provider: Provider) -> ProviderError:
    return ProviderError(
        ErrorKind.TRUNCATED,
        f"{provider.display_name}: the reply stopped before it was finished",
        provider=provider,
    )


def too_large(provider: Provider, what: str) -> ProviderError:
    return ProviderError(
        ErrorKind.TOO_LARGE,
        f"{provider.display_name}: {what}; byok-tui stopped reading",
        provider=provider,
        remedy="What arrived is kept. If this is a real reply, ask for a shorter one.",
    )


class StreamBudget:
    """Bounds on one stream, so a broken or hostile server cannot grow memory or run forever
    (a stream of keep-alive comments never yields an event, so this sits under the parser)."""

    def __init__(self, provider: Provider) -> None:
        self._provider = provider
        self._started = time.monotonic()
        self._received = 0

    def add(self, amount: int) -> None:
        self._received += amount
        if self._received > MAX_STREAM_BYTES:
            raise too_large(self._provider, f"the stream passed {MAX_STREAM_BYTES // 2**20} MB")
        if time.monotonic() - self._started > MAX_STREAM_SECONDS:
            raise too_large(
                self._provider, f"the stream went on for over {MAX_STREAM_SECONDS / 60:.0f} min"
            )


class Gatherer:
    """Times the reader's waits for its pieces, and lets the next tokens gather after a wait
    (GATHER_SECONDS) once the stream is coming at a model's pace: a wait soon after another.
    A single wait (the reply's first words, a burst catching up once) is followed at once."""

    def __init__(self) -> None:
        self._asked = time.monotonic()
        self._last_wait = -LIVE_SECONDS

    def came(self) -> bool:
        """A piece came: whether the reader had to wait for it."""
        return time.monotonic() - self._asked > WAITED_SECONDS

    async def ask_again(self, waited: bool) -> None:
        now = time.monotonic()
        if waited:
            live = now - self._last_wait < LIVE_SECONDS
            self._last_wait = now
            if live:
                await asyncio.sleep(GATHER_SECONDS)
        self._asked = time.monotonic()


async def sse_events(provider: Provider, response: StreamBody) -> AsyncIterator[tuple[str, str]]:
    """(event name, data) for each Server-Sent Event; comments are dropped.

    Framing is httpx-sse's own: lines split only at CR, LF and CRLF (never at U+2028 inside
    JSON), text decoded incrementally (events split at any byte boundary are reassembled).
    Driven here rather than through EventSource so that the bounds apply to comments and to
    a line or event that never ends.
    """
    from byok_tui.compat import sse_decoders  # httpx-sse's own, not public: see there

    lines, events = sse_decoders()
    budget = StreamBudget(provider)
    pending = 0  # characters of the event being assembled
    gatherer = Gatherer()
    async for text in response.aiter_text():
        waited = gatherer.came()
        budget.add(len(text))
        for line in lines.decode(text):
            pending += len(line)
            event = events.decode(line)
            if event is not None:
                pending = 0
                yield event.event, event.data
        partial_line = sum(map(len, lines.buffer)) if lines.buffer else 0
        if pending + partial_line > MAX_EVENT_BYTES:
            raise too_large(provider, "one event of the stream is too large to be a reply")
        await gatherer.ask_again(waited)
    for line in lines.flush():
        event = events.decode(line)
        if event is not None:
            yield event.event, event.data


async def ndjson_lines(provider: Provider, response: StreamBody) -> AsyncIterator[str]:
    """Each newline-terminated line (only `\\n` ends a line); bounded in length."""
    budget = StreamBudget(provider)
    buffer = b""
    gatherer = Gatherer()
    async for chunk in response.aiter_bytes():
        waited = gatherer.came()
        budget.add(len(chunk))
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if line.strip():
                yield _decode_line(provider, line)
        if len(buffer) > MAX_EVENT_BYTES:
            raise too_large(provider, "one line of the stream is too long to be a reply")
        await gatherer.ask_again(waited)
    if buffer.strip():
        yield _decode_line(provider, buffer)


def _decode_line(provider: Provider, line: bytes) -> str:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        raise protocol_error(provider, "the stream carried text that is not UTF-8") from None


# No call has a trillion tokens; SQLite holds integers below 2**63, and a negative count would
# make spend negative: a count outside 0..LARGEST_COUNT a provider states is not taken.
LARGEST_COUNT = 10**12


def as_int(value: Any) -> int | None:
    """A count a provider stated, when it is one a call could have."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= LARGEST_COUNT:
        return value
    return None
