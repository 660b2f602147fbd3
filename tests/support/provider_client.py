"""A provider client pointed at a loopback server, and helpers to read what it streams."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from byok_tui.core.registry import Provider, get_provider
from byok_tui.keys import KeyStore, entry_name
from byok_tui.providers.client import ProviderClient, Timeouts
from byok_tui.providers.endpoints import override_variable
from byok_tui.providers.errors import ProviderError
from byok_tui.providers.types import ChatMessage, ChatRequest, StreamEvent, TextDelta
from tests.support.provider_server import ProviderServer


def base_for(provider: Provider, server: ProviderServer) -> str:
    """Where the override points the provider: the loopback server plus the registry path."""
    from urllib.parse import urlsplit

    path = urlsplit(provider.base_url).path
    return server.base_url + path


def client_for(
    provider_id: str,
    server: ProviderServer,
    store: KeyStore,
    *,
    key: str | None = "test-key-" + "k" * 24,
    read_timeout: float = 10.0,
) -> ProviderClient:
    provider = get_provider(provider_id)
    if key is not None and provider.needs_key:
        store.set(entry_name(provider_id), key)
    environ = {override_variable(provider): base_for(provider, server)}
    timeouts = Timeouts(connect=5, read=read_timeout, read_local=read_timeout)
    return ProviderClient(store, environ=environ, timeouts=timeouts)


def chat(model: str = "test-model", **kwargs: object) -> ChatRequest:
    messages = (
        ChatMessage("user", "Hi there"),
        ChatMessage("assistant", "Hello. How can I help?"),
        ChatMessage("user", "What is 1+1?"),
    )
    return ChatRequest(model=model, messages=messages, **kwargs)  # type: ignore[arg-type]


async def collect(
    client: ProviderClient, provider_id: str, request: ChatRequest | None = None
) -> list[StreamEvent]:
    async with client:
        return [e async for e in client.stream_chat(get_provider(provider_id), request or chat())]


async def text_until_error(client: ProviderClient, provider_id: str) -> tuple[str, ProviderError]:
    """The text that arrived before the call failed, and the failure (which must happen)."""
    received: list[str] = []
    with pytest.raises(ProviderError) as raised:
        async with client:
            async for event in client.stream_chat(get_provider(provider_id), chat()):
                if isinstance(event, TextDelta):
                    received.append(event.text)
    return "".join(received), raised.value


def text_of(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def drain(stream: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [e async for e in stream]
