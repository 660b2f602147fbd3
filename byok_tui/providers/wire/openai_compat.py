"""The OpenAI Chat Completions wire format: openai, xai, openrouter, deepseek, groq, mistral.

Bearer key in the Authorization header; unnamed SSE events ended by `data: [DONE]`.
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
    chat_messages,
    load_object,
    sse_events,
    truncated,
)


def _image_fields(message: ChatMessage) -> dict[str, Any]:
    """A message with images: its content a list of parts, each image a data URL."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
    parts += [{"type": "image_url", "image_url": {"url": i.data_url}} for i in message.images]
    return {"content": parts}


def _tool_turn(message: ChatMessage) -> list[dict[str, Any]]:
    """An assistant turn that called tools, or the `tool` messages answering each call."""
    if message.tool_calls:
        calls = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.raw_arguments or "{}"},
            }
            for call in message.tool_calls
        ]
        return [{"role": "assistant", "content": message.content or None, "tool_calls": calls}]
    answers = [
        {"role": "tool", "tool_call_id": result.call_id, "content": result.content}
        for result in message.tool_results
    ]
    return answers + ([{"role": "user", "content": message.content}] if message.content else [])


def tool_definitions(tools: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    """Tools as the OpenAI-compatible APIs (and Ollama's) take them."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema,
            },
        }
        for tool in tools
    ]


def chat_call(
    provider: Provider, base_url: str, key: str, chat: ChatRequest, model: Model
) -> HttpCall:
    messages = chat_messages(chat, _image_fields, _tool_turn)
    body: dict[str, Any] = {
        "model": chat.model,
        "messages": messages,
        "stream": True,
        provider.token_param: chat.max_tokens,
    }
    if tools := offered_tools(chat, model.takes_tools):
        body["tools"] = tool_definitions(tools)
    if chat.temperature is not None and model.accepts_temperature:
        body["temperature"] = chat.temperature
    if provider.stream_usage_option:
        body["stream_options"] = {"include_usage": True}
    return HttpCall(
        "POST",
        f"{base_url}/chat/completions",
        headers=carry_key(provider, key)[0] | {"accept": "text/event-stream"},
        json=body,
    )


def _typed_chunk_events(content: Any) -> list[StreamEvent]:
    """Content that is not a plain string."""
    events: list[StreamEvent] = []
    if isinstance(content, list):  # Mistral: typed chunks, thinking among them
        for part in content:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text" and isinstance(part.get("text"), str):
                events.append(TextDelta(part["text"]))
            elif part.get("type") == "thinking":
                for inner in part.get("thinking") or []:
                    if isinstance(inner, dict) and isinstance(inner.get("text"), str):
                        events.append(ReasoningDelta(inner["text"]))
    return [e for e in events if not isinstance(e, TextDelta | ReasoningDelta) or e.text]


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    details = raw.get("completion_tokens_details")
    reasoning = as_int(details.get("reasoning_tokens")) if isinstance(details, dict) else None
    prompt_details = raw.get("prompt_tokens_details")
    cached = (
        as_int(prompt_details.get("cached_tokens")) if isinstance(prompt_details, dict) else None
    )
    if cached is None:
        cached = as_int(raw.get("prompt_cache_hit_tokens"))  # DeepSeek
    return Usage(
        as_int(raw.get("prompt_tokens")),
        as_int(raw.get("completion_tokens")),
        reasoning,
        cached_input_tokens=cached,
    )


async def parse_stream(
    provider: Provider, response: StreamBody, tools: tuple[ToolSpec, ...] = ()
) -> AsyncIterator[StreamEvent]:
    finish: str | None = None
    usage: Usage | None = None
    done = False
    calls = CallPieces()  # streamed by index: an id and a name once, the arguments in parts
    async for _name, data in sse_events(provider, response):
        if data == "[DONE]":
            done = True
            break
        if not data:
            continue
        chunk = load_object(provider, data)
        if chunk.get("error"):
            raise stream_error(provider, chunk)
        groq = chunk.get("x_groq")
        if isinstance(groq, dict):
            if groq.get("error"):
                raise stream_error(provider, {"error": {"message": str(groq["error"])}})
            usage = _usage(groq.get("usage")) or usage
        if chunk.get("usage"):
            usage = _usage(chunk["usage"]) or usage
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if isinstance(delta, dict):
                reasoning = delta.get("reasoning_content") or delta.get("reasoning")
                if isinstance(reasoning, str) and reasoning:
                    yield ReasoningDelta(reasoning)
                content = delta.get("content")
                if isinstance(content, str):  # the common case, one per token: no list
                    if content:
                        yield TextDelta(content)
                else:
                    for event in _typed_chunk_events(content):
                        yield event
                for piece in delta.get("tool_calls") or []:
                    if isinstance(piece, dict):
                        function = piece.get("function")
                        function = function if isinstance(function, dict) else {}
                        index = piece.get("index")
                        calls.add(
                            index if isinstance(index, int) else 0,
                            call_id=piece.get("id"),
                            name=function.get("name"),
                            arguments=function.get("arguments"),
                        )
            reason = choice.get("finish_reason")
            if reason == "error":
                raise stream_error(provider, chunk)
            if isinstance(reason, str) and reason:
                finish = reason
    if not done and finish is None:
        raise truncated(provider)
    if calls:
        yield ToolCalls(calls.calls(tools))
    if usage is not None:
        yield usage
    yield Done(finish or "stop")


def models_call(provider: Provider, base_url: str, key: str | None) -> HttpCall:
    headers = carry_key(provider, key)[0]
    return HttpCall("GET", f"{base_url}/models", headers=headers)


def _is_free(entry: dict[str, Any]) -> bool:
    if str(entry.get("id", "")).endswith(":free"):
        return True
    pricing = entry.get("pricing")
    if isinstance(pricing, dict):
        return pricing.get("prompt") == "0" and pricing.get("completion") == "0"
    return False


def parse_models(provider: Provider, data: Any) -> list[ListedModel]:
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise protocol_error(provider, "the model list is not in the expected shape")
    listed = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            continue
        capabilities = entry.get("capabilities")
        if isinstance(capabilities, dict) and capabilities.get("completion_chat") is False:
            continue  # Mistral lists embedding and OCR models too
        context = next(
            (
                as_int(entry.get(f))
                for f in ("context_length", "max_context_length", "context_window")
                if as_int(entry.get(f))
            ),
            None,
        )
        name = entry.get("name")
        listed.append(
            ListedModel(
                id=entry["id"],
                display_name=name if isinstance(name, str) and name else entry["id"],
                free=_is_free(entry),
                context_length=context,
            )
        )
    return listed
