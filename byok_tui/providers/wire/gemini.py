"""The Gemini API wire format (`streamGenerateContent?alt=sse`).

The key travels in the `key` query parameter (the registry's key_carrier): the one place a
key is in a URL. That URL is never logged unredacted and never shown (see byok_tui.core.redaction).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

from byok_tui.core.errors import ErrorKind
from byok_tui.core.registry import Model, Provider
from byok_tui.providers.errors import ProviderError, protocol_error, stream_error
from byok_tui.providers.tool_calls import checked_call, tool_name
from byok_tui.providers.types import (
    ChatMessage,
    ChatRequest,
    Done,
    ListedModel,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
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
    turns,
)


def _usage(meta: dict[str, Any]) -> Usage:
    """candidatesTokenCount leaves out the thinking tokens, which are billed as output."""
    answer, thoughts = (
        as_int(meta.get("candidatesTokenCount")),
        as_int(meta.get("thoughtsTokenCount")),
    )
    output = None if answer is None and thoughts is None else (answer or 0) + (thoughts or 0)
    return Usage(
        as_int(meta.get("promptTokenCount")),
        output,
        thoughts,
        cached_input_tokens=as_int(meta.get("cachedContentTokenCount")),
    )


def _model_path(model_id: str) -> str:
    return quote(model_id.removeprefix("models/"), safe="-._~")


def _parts(message: ChatMessage) -> list[dict[str, Any]]:
    """A message's text, then its images inline (base64)."""
    images = [{"inlineData": {"mimeType": i.media_type, "data": i.base64}} for i in message.images]
    return [{"text": message.content}, *images]


def _tool_parts(message: ChatMessage) -> list[dict[str, Any]]:
    """A model turn that called tools (its text, then a `functionCall` part a call, with the
    signature Gemini gave it), or the user's turn answering them (a `functionResponse` part
    a call, by the tool's name)."""
    said = [{"text": message.content}] if message.content else []
    if message.tool_calls:
        calls = [
            {
                "functionCall": {"name": call.name, "args": call.arguments or {}},
                **({"thoughtSignature": call.signature} if call.signature else {}),
            }
            for call in message.tool_calls
        ]
        return said + calls
    answers = [
        {
            "functionResponse": {
                "name": result.name,
                "response": {"error" if result.is_error else "content": result.content},
            }
        }
        for result in message.tool_results
    ]
    return answers + said


def chat_call(
    provider: Provider, base_url: str, key: str, chat: ChatRequest, model: Model
) -> HttpCall:
    generation: dict[str, Any] = {provider.token_param: chat.max_tokens}
    if chat.temperature is not None and model.accepts_temperature:
        generation["temperature"] = chat.temperature
    body: dict[str, Any] = {
        "contents": [
            {
                "role": "model" if m.role == "assistant" else "user",
                "parts": _tool_parts(m) if m.tool_calls or m.tool_results else _parts(m),
            }
            for m in turns(chat)
        ],
        "generationConfig": generation,
    }
    if chat.system:
        body["systemInstruction"] = {"parts": [{"text": chat.system}]}
    if tools := offered_tools(chat, model.takes_tools):
        declarations = [
            {
                "name": tool.name,
                "description": tool.description,
                "parametersJsonSchema": tool.input_schema,
            }
            for tool in tools
        ]
        body["tools"] = [{"functionDeclarations": declarations}]
    return HttpCall(
        "POST",
        f"{base_url}/models/{_model_path(chat.model)}:streamGenerateContent",
        params={"alt": "sse"} | carry_key(provider, key)[1],
        headers={"accept": "text/event-stream"},
        json=body,
    )


async def parse_stream(
    provider: Provider, response: StreamBody, tools: tuple[ToolSpec, ...] = ()
) -> AsyncIterator[StreamEvent]:
    finish: str | None = None
    usage: Usage | None = None
    calls: list[ToolCall] = []  # each whole in one part, its arguments an object
    async for _name, data in sse_events(provider, response):
        if not data:
            continue
        chunk = load_object(provider, data)
        if chunk.get("error"):
            raise stream_error(provider, chunk)
        feedback = chunk.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason"):
            raise ProviderError(
                ErrorKind.BAD_REQUEST,
                f"{provider.display_name}: the prompt was blocked ({feedback['blockReason']})",
                provider=provider,
            )
        meta = chunk.get("usageMetadata")
        if isinstance(meta, dict):
            usage = _usage(meta)
        candidates = chunk.get("candidates") or []
        if not candidates or not isinstance(candidates[0], dict):
            continue
        candidate = candidates[0]
        for part in (candidate.get("content") or {}).get("parts") or []:
            if isinstance(part, dict) and isinstance(part.get("text"), str) and part["text"]:
                yield (
                    ReasoningDelta(part["text"]) if part.get("thought") else TextDelta(part["text"])
                )
            call = part.get("functionCall") if isinstance(part, dict) else None
            if isinstance(call, dict):
                args, signature = call.get("args"), part.get("thoughtSignature")
                calls.append(
                    checked_call(
                        call["id"] if isinstance(call.get("id"), str) else f"call_{len(calls)}",
                        tool_name(call.get("name")),
                        json.dumps(args) if isinstance(args, dict) else "",
                        tools,
                        arguments=args if isinstance(args, dict) else {},
                        signature=signature if isinstance(signature, str) else None,
                    )
                )
        if candidate.get("finishReason"):
            finish = str(candidate["finishReason"])
    if finish is None:  # Gemini has no terminator: the last chunk carries finishReason
        raise truncated(provider)
    if calls:
        yield ToolCalls(tuple(calls))
    if usage is not None:
        yield usage
    yield Done(finish)


def models_call(provider: Provider, base_url: str, key: str | None) -> HttpCall:
    params = {"pageSize": "1000"} | carry_key(provider, key)[1]
    return HttpCall("GET", f"{base_url}/models", params=params)


def parse_models(provider: Provider, data: Any) -> list[ListedModel]:
    entries = data.get("models") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise protocol_error(provider, "the model list is not in the expected shape")
    listed = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        if "generateContent" not in (entry.get("supportedGenerationMethods") or []):
            continue  # embedding, image and speech models
        model_id = entry["name"].removeprefix("models/")
        listed.append(
            ListedModel(
                id=model_id,
                display_name=str(entry.get("displayName") or model_id),
                context_length=as_int(entry.get("inputTokenLimit")),
            )
        )
    return listed
