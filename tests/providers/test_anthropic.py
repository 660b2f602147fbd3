"""Anthropic Messages, against a real loopback server."""

from __future__ import annotations

import pytest

from byok_tui.core.errors import ErrorKind
from byok_tui.keys import KeyStore
from byok_tui.providers.errors import ProviderError
from byok_tui.providers.types import Done, ReasoningDelta, Usage
from tests.support.provider_client import chat, client_for, collect, text_of
from tests.support.provider_server import ProviderServer, Reply, sse

KEY = "sk-ant-api03-" + "T" * 40


def anthropic_stream(*deltas: dict, stop: bool = True) -> list[bytes | float]:
    steps = sse(
        {"type": "message_start", "message": {"usage": {"input_tokens": 9}}}, event="message_start"
    )
    steps += sse(
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        event="content_block_start",
    )
    steps += [b'event: ping\ndata: {"type": "ping"}\n\n']
    for delta in deltas:
        steps += sse(
            {"type": "content_block_delta", "index": 0, "delta": delta}, event="content_block_delta"
        )
    steps += sse({"type": "some_future_event", "x": 1}, event="some_future_event")
    if stop:
        steps += sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 4},
            },
            event="message_delta",
        )
        steps += sse({"type": "message_stop"}, event="message_stop")
    return steps


async def test_the_request_uses_x_api_key_the_version_and_the_browser_access_header(
    server: ProviderServer, store: KeyStore
) -> None:
    server.reply_with(Reply(steps=anthropic_stream({"type": "text_delta", "text": "2"})))
    await collect(
        client_for("anthropic", server, store, key=KEY),
        "anthropic",
        chat("claude-sonnet-4-6", system="Be brief.", temperature=0.7, max_tokens=100),
    )
    seen = server.requests[0]
    assert seen.target == "/v1/messages"
    assert seen.header("x-api-key") == KEY
    assert seen.header("anthropic-version") == "2023-06-01"
    assert seen.header("anthropic-dangerous-direct-browser-access") == "true"
    assert seen.header("authorization") is None
    body = seen.json
    assert body["system"] == "Be brief."
    assert body["max_tokens"] == 100
    assert body["temperature"] == 0.7
    assert body["messages"][0] == {"role": "user", "content": "Hi there"}
    assert all(m["role"] != "system" for m in body["messages"])


async def test_generation_5_models_are_sent_no_temperature(
    server: ProviderServer, store: KeyStore
) -> None:
    server.reply_with(Reply(steps=anthropic_stream({"type": "text_delta", "text": "ok"})))
    await collect(
        client_for("anthropic", server, store),
        "anthropic",
        chat("claude-sonnet-5-5", temperature=0.3),
    )
    assert "temperature" not in server.requests[0].json


async def test_text_thinking_and_usage_are_parsed_and_unknown_events_ignored(
    server: ProviderServer, store: KeyStore
) -> None:
    server.reply_with(
        Reply(
            steps=anthropic_stream(
                {"type": "thinking_delta", "thinking": "Adding."},
                {"type": "signature_delta", "signature": "opaque"},
                {"type": "text_delta", "text": "1+1 "},
                {"type": "text_delta", "text": "is 2."},
                {"type": "citations_delta", "citation": {}},
            )
        )
    )
    events = await collect(client_for("anthropic", server, store), "anthropic")
    assert ReasoningDelta("Adding.") in events
    assert text_of(events) == "1+1 is 2."
    assert events[-2:] == [Usage(9, 4), Done("end_turn")]


async def test_an_error_event_mid_stream_is_reported_as_overloaded(
    server: ProviderServer, store: KeyStore
) -> None:
    steps = anthropic_stream({"type": "text_delta", "text": "Par"}, stop=False)
    steps += sse(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        event="error",
    )
    server.reply_with(Reply(steps=steps))
    with pytest.raises(ProviderError) as raised:
        await collect(client_for("anthropic", server, store), "anthropic")
    assert raised.value.kind is ErrorKind.OVERLOADED
    assert raised.value.provider_message == "Overloaded"


async def test_a_stream_without_message_stop_is_truncated(
    server: ProviderServer, store: KeyStore
) -> None:
    server.reply_with(
        Reply(steps=anthropic_stream({"type": "text_delta", "text": "x"}, stop=False))
    )
    with pytest.raises(ProviderError) as raised:
        await collect(client_for("anthropic", server, store), "anthropic")
    assert raised.value.kind is ErrorKind.TRUNCATED


async def test_models_are_listed_with_display_names(
    server: ProviderServer, store: KeyStore
) -> None:
    from byok_tui.core.registry import get_provider

    server.reply_with(
        Reply(
            headers={"content-type": "application/json"},
            steps=[
                b'{"data":[{"type":"model","id":"claude-x-1","display_name":"Claude X"}],'
                b'"has_more":false}'
            ],
        )
    )
    async with client_for("anthropic", server, store, key=KEY) as client:
        listed = await client.list_models(get_provider("anthropic"))
    assert [(m.id, m.display_name) for m in listed] == [("claude-x-1", "Claude X")]
    assert server.requests[0].target == "/v1/models?limit=1000"
    assert server.requests[0].header("x-api-key") == KEY


async def test_cache_reads_and_writes_count_as_input_and_are_kept_apart_for_pricing(
    server: ProviderServer, store: KeyStore
) -> None:
    # Anthropic's input_tokens leaves out what was read from or written to the prompt cache;
    # all three are billed input, at different prices.
    start = {
        "type": "message_start",
        "message": {
            "usage": {
                "input_tokens": 50,
                "cache_read_input_tokens": 1000,
                "cache_creation_input_tokens": 200,
            }
        },
    }
    steps = anthropic_stream({"type": "text_delta", "text": "ok"})
    steps[: len(sse(start, event="message_start"))] = sse(start, event="message_start")
    server.reply_with(Reply(steps=steps))
    events = await collect(client_for("anthropic", server, store), "anthropic")
    assert Usage(1250, 4, cached_input_tokens=1000, cache_write_tokens=200) in events
