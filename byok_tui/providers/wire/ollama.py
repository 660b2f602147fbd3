"""The Ollama native wire format: `/api/chat` streaming NDJSON, `/api/tags` for models.

No key is ever sent: a local runtime takes none, and the placeholder that stands for one
inside byok-tui (its name) never leaves it.
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
    chat_messages,
    load_object,
    ndjson_lines,
    truncated,
)


def _image_fields(message: ChatMessage) -> dict[str, Any]:
    """A message with images: its content, and the images as base64 strings beside it."""
    return {"content": message.content, "images": [image.base64 for image in message.images]}


def chat_call(
    provider: Provider, base_url: str, key: str, chat: ChatRequest, model: Model
) -> HttpCall:
    messages = chat_messages(chat, _image_fields)
    options: dict[str, Any] = {provider.token_param: chat.max_tokens}
    if chat.temperature is not None and model.accepts_temperature:
        options["temperature"] = chat.temperature
    body = {"model": chat.model, "messages": messages, "stream": True, "options": options}
    return HttpCall("POST", f"{base_url}/api/chat", json=body)


async def parse_stream(provider: Provider, response: StreamBody) -> AsyncIterator[StreamEvent]:
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
        if chunk.get("done") is True:
            yield Usage(as_int(chunk.get("prompt_eval_count")), as_int(chunk.get("eval_count")))
            yield Done(str(chunk.get("done_reason") or "stop"))
            return
    raise truncated(provider)


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
