"""The Ollama native wire format: `/api/chat` streaming NDJSON, `/api/tags` for models.

No key is ever sent: a local runtime takes none, and the placeholder that stands for one
inside byok-tui (its name) never leaves it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from byok_tui.core.registry import Model, Provider
from byok_tui.providers.errors import protocol_error, stream_error
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
    chat_messages,
    load_object,
    ndjson_lines,
    truncated,
)
from byok_tui.providers.wire.openai_compat import tool_definitions


def _image_fields(message: ChatMessage) -> dict[str, Any]:
    """A message with images: its content, and the images as base64 strings beside it."""
    return {"content": message.content, "images": [image.base64 for image in message.images]}


def _tool_turn(message: ChatMessage) -> list[dict[str, Any]]:
    """An assistant turn that called tools (their arguments as objects), or a `tool` message
    answering each call, by the tool's name (Ollama's calls carry no id)."""
    if message.tool_calls:
        calls = [
            {"function": {"name": call.name, "arguments": call.arguments or {}}}
            for call in message.tool_calls
        ]
        return [{"role": "assistant", "content": message.content, "tool_calls": calls}]
    answers = [
        {"role": "tool", "content": result.content, "tool_name": result.name}
        for result in message.tool_results
    ]
    return answers + ([{"role": "user", "content": message.content}] if message.content else [])


def chat_call(
    provider: Provider, base_url: str, key: str, chat: ChatRequest, model: Model
) -> HttpCall:
    messages = chat_messages(chat, _image_fields, _tool_turn)
    options: dict[str, Any] = {provider.token_param: chat.max_tokens}
    if chat.temperature is not None and model.accepts_temperature:
        options["temperature"] = chat.temperature
    body = {"model": chat.model, "messages": messages, "stream": True, "options": options}
    if tools := offered_tools(chat, model.takes_tools):
        body["tools"] = tool_definitions(tools)
    return HttpCall("POST", f"{base_url}/api/chat", json=body)


async def parse_stream(
    provider: Provider, response: StreamBody, tools: tuple[ToolSpec, ...] = ()
) -> AsyncIterator[StreamEvent]:
    calls: list[ToolCall] = []  # each whole in one line, its arguments an object
    async for line in ndjson_lines(provider, response):
        chunk = load_object(provider, line)
        if chunk.get("error"):
            raise stream_error(provider, chunk)
        message = chunk.get("message") or {}
        if isinstance(message, dict):
            if isinstance(message.get("thinking"), str) and message["thinking"]:
                yield ReasoningDelta(message["thinking"])
            if isinstance(message.get("content"), str) and message["content"]:
                yield TextDelta(message["content"])
            for call in message.get("tool_calls") or []:
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict):
                    arguments = function.get("arguments")
                    calls.append(
                        checked_call(
                            f"call_{len(calls)}",
                            tool_name(function.get("name")),
                            _as_text(arguments),
                            tools,
                            arguments=arguments if isinstance(arguments, dict) else None,
                        )
                    )
        if chunk.get("done") is True:
            if calls:
                yield ToolCalls(tuple(calls))
            yield Usage(as_int(chunk.get("prompt_eval_count")), as_int(chunk.get("eval_count")))
            yield Done(str(chunk.get("done_reason") or "stop"))
            return
    raise truncated(provider)


def _as_text(arguments: Any) -> str:
    """Arguments as JSON text (an object usually; a string a model sent as it is)."""
    if isinstance(arguments, str):
        return arguments
    try:
        return json.dumps(arguments)
    except (TypeError, ValueError, RecursionError):
        return ""


def models_call(provider: Provider, base_url: str, key: str | None) -> HttpCall:
    return HttpCall("GET", f"{base_url}/api/tags")


def parse_models(provider: Provider, data: Any) -> list[ListedModel]:
    entries = data.get("models") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise protocol_error(provider, "the model list is not in the expected shape")
    return [
        ListedModel(id=e["name"], display_name=e["name"], free=True)
        for e in entries
        if isinstance(e, dict) and isinstance(e.get("name"), str)
    ]
