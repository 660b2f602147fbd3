"""The Anthropic Messages wire format.

Key in `x-api-key`, `anthropic-version: 2023-06-01`, and the
`anthropic-dangerous-direct-browser-access: true` header (Anthropic asks for it from a client
that calls the API directly with the user's own key). Named SSE events;
the stream ends with `message_stop` (there is no `[DONE]`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from byok_tui.core.registry import Model, Provider
from byok_tui.providers.errors import protocol_error, stream_error
from byok_tui.providers.tool_calls import CallPieces
from byok_tui.providers.types import (
    ChatMessage,
    ChatRequest,
    Done,
    ListedModel,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCalls,
    ToolSpec,
    Usage,
    offered_tools,
)
from byok_tui.providers.wire.common import (
    HttpCall,
    StreamBody,
    as_int,
    carry_key,
    load_object,
    sse_events,
    truncated,
)

API_VERSION = "2023-06-01"


def _headers(provider: Provider, key: str | None) -> dict[str, str]:
    return carry_key(provider, key)[0] | {
        "anthropic-version": API_VERSION,
        "anthropic-dangerous-direct-browser-access": "true",
    }


def _fields(message: ChatMessage) -> dict[str, Any]:
    """A message's content: with images, a list of blocks, the images (base64) first."""
    if not message.images:
        return {"content": message.content}
    blocks: list[dict[str, Any]] = [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": i.media_type, "data": i.base64},
        }
        for i in message.images
    ]
    return {"content": [*blocks, {"type": "text", "text": message.content}]}


def _tool_fields(message: ChatMessage) -> dict[str, Any]:
    """A turn that called tools (text, then a `tool_use` block a call), or the user's turn
    answering them (a `tool_result` block a call, then any text)."""
    if message.tool_calls:
        said = [{"type": "text", "text": message.content}] if message.content else []
        uses = [
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments or {}}
            for call in message.tool_calls
        ]
        return {"content": said + uses}
    results: list[dict[str, Any]] = [
        {
            "type": "tool_result",
            "tool_use_id": result.call_id,
            "content": result.content,
            **({"is_error": True} if result.is_error else {}),
        }
        for result in message.tool_results
    ]
    said = [{"type": "text", "text": message.content}] if message.content else []
    return {"content": results + said}


def chat_call(
    provider: Provider, base_url: str, key: str, chat: ChatRequest, model: Model
) -> HttpCall:
    messages: list[dict[str, Any]] = [
        {"role": m.role, **(_tool_fields(m) if m.tool_calls or m.tool_results else _fields(m))}
        for m in chat.messages
    ]
    if chat.continues:
        # The cut reply is the start of the answer (a prefill), which the API refuses when
        # it ends in whitespace: the model writes that whitespace itself.
        messages[-1]["content"] = messages[-1]["content"].rstrip()
    body: dict[str, Any] = {
        "model": chat.model,
        provider.token_param: chat.max_tokens,
        "messages": messages,
        "stream": True,
    }
    if chat.system:
        body["system"] = chat.system
    if tools := offered_tools(chat, model.takes_tools):
        body["tools"] = [
            {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
            for tool in tools
        ]
    if chat.temperature is not None and model.accepts_temperature:
        body["temperature"] = chat.temperature  # in range: checked against the registry
    headers = _headers(provider, key) | {"accept": "text/event-stream"}
    return HttpCall("POST", f"{base_url}/v1/messages", headers=headers, json=body)


def _usage(raw: dict[str, Any]) -> Usage:
    """Anthropic's input_tokens leaves out cache reads and writes: all three are input."""
    fresh = as_int(raw.get("input_tokens"))
    read = as_int(raw.get("cache_read_input_tokens"))
    written = as_int(raw.get("cache_creation_input_tokens"))
    total = None if fresh is None else fresh + (read or 0) + (written or 0)
    return Usage(
        total,
        as_int(raw.get("output_tokens")),
        cached_input_tokens=read or None,
        cache_write_tokens=written or None,
    )


async def parse_stream(
    provider: Provider, response: StreamBody, tools: tuple[ToolSpec, ...] = ()
) -> AsyncIterator[StreamEvent]:
    usage: dict[str, Any] = {}
    stop_reason = "end_turn"
    calls = CallPieces()  # a tool_use block each, its input streamed as JSON in parts
    async for name, data in sse_events(provider, response):
        if name == "ping" or not data:
            continue
        payload = load_object(provider, data)
        kind = payload.get("type", name)
        if kind == "error":
            raise stream_error(provider, payload)
        if kind == "message_start":
            usage.update((payload.get("message") or {}).get("usage") or {})
        elif kind == "content_block_start":
            block, index = payload.get("content_block"), payload.get("index")
            if isinstance(block, dict) and block.get("type") == "tool_use":
                calls.add(
                    index if isinstance(index, int) else 0,
                    call_id=block.get("id"),
                    name=block.get("name"),
                )
        elif kind == "content_block_delta":
            delta = payload.get("delta") or {}
            if delta.get("type") == "text_delta" and delta.get("text"):
                yield TextDelta(str(delta["text"]))
            elif delta.get("type") == "thinking_delta" and delta.get("thinking"):
                yield ReasoningDelta(str(delta["thinking"]))
            elif delta.get("type") == "input_json_delta":
                index = payload.get("index")
                calls.add(
                    index if isinstance(index, int) else 0, arguments=delta.get("partial_json")
                )
        elif kind == "message_delta":
            stop_reason = str((payload.get("delta") or {}).get("stop_reason") or stop_reason)
            # Cumulative counts: what message_delta says replaces what message_start said.
            usage.update({k: v for k, v in (payload.get("usage") or {}).items() if v is not None})
        elif kind == "message_stop":
            if calls:
                yield ToolCalls(calls.calls(tools))
            yield _usage(usage)
            yield Done(stop_reason)
            return
        # Unknown events and delta types are ignored: the API may add new ones.
    raise truncated(provider)


def models_call(provider: Provider, base_url: str, key: str | None) -> HttpCall:
    return HttpCall(
        "GET", f"{base_url}/v1/models", headers=_headers(provider, key), params={"limit": "1000"}
    )


def parse_models(provider: Provider, data: Any) -> list[ListedModel]:
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise protocol_error(provider, "the model list is not in the expected shape")
    return [
        ListedModel(
            id=e["id"],
            display_name=str(e.get("display_name") or e["id"]),
            context_length=as_int(e.get("max_input_tokens")),
        )
        for e in entries
        if isinstance(e, dict) and isinstance(e.get("id"), str)
    ]
