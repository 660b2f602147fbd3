"""A finished reply leaves its connection open for the next request, as providers expect:
closing a response whose body was not read to its end closes the connection, and the next
message then waits for a new one (with a real provider, a TLS handshake: tens of ms)."""

from __future__ import annotations

import time

import pytest

from byok_tui.core.registry import get_provider
from byok_tui.keys import KeyStore
from byok_tui.providers.types import Done
from tests.support.family_replies import FAMILIES, family_reply
from tests.support.provider_client import chat, client_for, text_of
from tests.support.provider_server import Reply, openai_reply, provider_server


@pytest.mark.parametrize("provider_id", FAMILIES)
async def test_the_next_request_goes_over_the_connection_the_last_reply_came_on(
    provider_id: str, store: KeyStore
) -> None:
    with provider_server(keep_alive=True) as server:
        server.reply_with(family_reply(provider_id, "Hello there"))
        client = client_for(provider_id, server, store)
        provider, request = get_provider(provider_id), chat(FAMILIES[provider_id])
        async with client:
            for _ in range(3):
                events = [event async for event in client.stream_chat(provider, request)]
                assert text_of(events) == "Hello there"
                assert isinstance(events[-1], Done)
        assert len(server.requests) == 3
        assert len(server.connections) == 1, "a new connection was made for each reply"


async def test_a_reply_ends_at_once_when_the_server_holds_its_body_open_after_the_end(
    store: KeyStore,
) -> None:
    """What follows the reply's end is read only briefly: a server that sends `[DONE]` and
    then neither ends the body nor closes the connection never keeps the reply going."""
    held = openai_reply("Hello")
    held = Reply(steps=[*held.steps, 30.0])  # [DONE], then nothing for 30 s
    with provider_server(keep_alive=True) as server:
        server.reply_with(held, openai_reply("Again"))
        client = client_for("openai", server, store)
        provider = get_provider("openai")
        async with client:
            started = time.monotonic()
            events = [event async for event in client.stream_chat(provider, chat())]
            took = time.monotonic() - started
            assert text_of(events) == "Hello" and isinstance(events[-1], Done)
            assert took < 5, f"the reply went on {took:.1f} s after its end"
            # That connection was given up: the next reply comes on a new one.
            events = [event async for event in client.stream_chat(provider, chat())]
            assert text_of(events) == "Again"
        assert len(server.connections) == 2
