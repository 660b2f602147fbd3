"""The OpenAI Chat Completions wire format: openai, xai, openrouter, deepseek, groq, mistral.

Bearer key in the Authorization header; unnamed SSE events ended by `data: [DONE]`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from byok_tui.core.registry import Model, Provider
from byok_tui.providers.errors import protocol_error, stream_error
from byok_tui.providers.types import (
    ChatMessage,
    ChatRequest,
    Done,
    ListedModel,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    Usage,
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


def chat_call(
    provider: Provider, base_url: str, key: str, chat: ChatRequest, model: Model
) -> HttpCall:
    messages = chat_messages(chat, _image_fields)
    body: dict[str, Any] = {
        "model": chat.model,
        "messages": messages,
        "stream": True,
        provider.token_param: chat.max_tokens,
    }
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


async def parse_stream(provider: Provider, response: StreamBody) -> AsyncIterator[StreamEvent]:
    finish: str | None = None
    usage: Usage | None = None
    done = False
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
            reason = choice.get("finish_reason")
            if reason == "error":
                raise stream_error(provider, chunk)
            if isinstance(reason, str) and reason:
                finish = reason
    if not done and finish is None:
        raise truncated(provider)
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
