"""An image goes to each provider family in that family's own format (against a loopback
server): OpenAI-compatible as a data URL part, Anthropic as a base64 image block before the
text, Gemini as inline data after it, Ollama as a list of base64 strings beside the text."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from byok_tui.keys import KeyStore
from byok_tui.providers.types import ChatMessage, ChatRequest, Image
from tests.support.family_replies import FAMILIES, family_reply
from tests.support.provider_client import client_for, collect
from tests.support.provider_server import ProviderServer

# The smallest PNG there is: 1x1, one transparent pixel.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
B64 = base64.b64encode(PNG).decode()


def request(model: str) -> ChatRequest:
    return ChatRequest(
        model=model,
        messages=(
            ChatMessage("user", "Earlier, no picture"),
            ChatMessage("assistant", "Fine."),
            ChatMessage("user", "What is in this picture?", images=(Image("image/png", PNG),)),
        ),
    )


EXPECTED: dict[str, Any] = {
    "openai": {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in this picture?"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64}"}},
        ],
    },
    "anthropic": {
        "role": "user",
        "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B64}},
            {"type": "text", "text": "What is in this picture?"},
        ],
    },
    "google": {
        "role": "user",
        "parts": [
            {"text": "What is in this picture?"},
            {"inlineData": {"mimeType": "image/png", "data": B64}},
        ],
    },
    "ollama": {"role": "user", "content": "What is in this picture?", "images": [B64]},
}


@pytest.mark.parametrize("provider_id", FAMILIES)
async def test_an_image_is_sent_in_each_familys_own_format(
    server: ProviderServer, store: KeyStore, provider_id: str
) -> None:
    server.reply_with(family_reply(provider_id, "A pixel."))
    await collect(
        client_for(provider_id, server, store), provider_id, request(FAMILIES[provider_id])
    )
    body = server.requests[0].json
    turns = body["contents"] if provider_id == "google" else body["messages"]
    assert turns[-1] == EXPECTED[provider_id]
    # The turns without an image keep the plain shape.
    assert turns[0] in (
        {"role": "user", "content": "Earlier, no picture"},
        {"role": "user", "parts": [{"text": "Earlier, no picture"}]},
    )
