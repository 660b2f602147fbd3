"""The six OpenAI-compatible providers, against a real loopback server."""

from __future__ import annotations

import json

import pytest

from byok_tui.core.errors import ErrorKind
from byok_tui.core.registry import get_provider, providers
from byok_tui.keys import KeyStore
from byok_tui.providers.errors import ProviderError
from byok_tui.providers.types import Done, ReasoningDelta, Usage
from tests.support.provider_client import chat, client_for, collect, text_of, text_until_error
from tests.support.provider_server import ProviderServer, Reply, sse

OPENAI_FAMILY = [p.id for p in providers() if p.family == "openai-chat"]
KEY = "test-key-" + "q" * 30


def chunk(content: object = None, finish: str | None = None, **delta: object) -> dict:
    body = dict(delta)
    if content is not None:
        body["content"] = content
    return {"choices": [{"index": 0, "delta": body, "finish_reason": finish}]}


GREETING = sse(
    chunk("", role="assistant"),
    chunk("Hel"),
    chunk("lo, "),
    chunk("world"),
    chunk(finish="stop"),
    {"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3}},
    done=True,
)


@pytest.mark.parametrize("provider_id", OPENAI_FAMILY)
async def test_the_request_carries_the_key_as_bearer_and_the_documented_body(
    provider_id: str, server: ProviderServer, store: KeyStore
) -> None:
    provider = get_provider(provider_id)
    server.reply_with(Reply(steps=GREETING))
    model = provider.models[0]
    events = await collect(
        client_for(provider_id, server, store, key=KEY),
        provider_id,
        chat(model.id, system="Answer briefly.", temperature=0.7, max_tokens=321),
    )
    assert text_of(events) == "Hello, world"
    seen = server.requests[0]
    assert seen.method == "POST"
    assert seen.target.endswith("/chat/completions")
    assert KEY not in seen.target  # never in the URL
    assert seen.header("authorization") == f"Bearer {KEY}"
    body = seen.json
    assert body["model"] == model.id
    assert body["stream"] is True
    assert body["messages"] == [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "Hi there"},
        {"role": "assistant", "content": "Hello. How can I help?"},
        {"role": "user", "content": "What is 1+1?"},
    ]
    assert body[provider.token_param] == 321
    assert ("temperature" in body) == model.accepts_temperature
    assert ("stream_options" in body) == provider.stream_usage_option


async def test_text_usage_and_finish_reason_are_reassembled(
    server: ProviderServer, store: KeyStore
) -> None:
    server.reply_with(Reply(steps=GREETING))
    events = await collect(client_for("openai", server, store), "openai")
    assert events[-2:] == [Usage(12, 3, None), Done("stop")]


async def test_openai_models_that_refuse_temperature_are_sent_none(
    server: ProviderServer, store: KeyStore
) -> None:
    server.reply_with(Reply(steps=GREETING))
    await collect(client_for("openai", server, store), "openai", chat("gpt-5.5", temperature=0.2))
    body = server.requests[0].json
    assert "temperature" not in body
    assert body["max_completion_tokens"] == 4096
    assert "max_tokens" not in body


@pytest.mark.parametrize(
    ("provider_id", "field"),
    [
        ("deepseek", "reasoning_content"),
        ("xai", "reasoning_content"),
        ("openrouter", "reasoning"),
        ("groq", "reasoning"),
    ],
)
async def test_reasoning_deltas_are_told_apart_from_text(
    provider_id: str, field: str, server: ProviderServer, store: KeyStore
) -> None:
    server.reply_with(
        Reply(
            steps=sse(
                chunk(None, **{field: "Let me think."}),
                chunk(None, **{field: " Two."}),
                chunk("2", finish="stop"),
                done=True,
            )
        )
    )
    events = await collect(client_for(provider_id, server, store), provider_id)
    assert [e for e in events if isinstance(e, ReasoningDelta)] == [
        ReasoningDelta("Let me think."),
        ReasoningDelta(" Two."),
    ]
    assert text_of(events) == "2"


async def test_mistral_typed_content_chunks_carry_text_and_thinking(
    server: ProviderServer, store: KeyStore
) -> None:
    thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]}
    server.reply_with(
        Reply(
            steps=sse(
                chunk([thinking]),
                chunk([{"type": "text", "text": "Answer"}]),
                {
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 2},
                },
                done=True,
            )
        )
    )
    events = await collect(client_for("mistral", server, store), "mistral")
    assert ReasoningDelta("hmm") in events
    assert text_of(events) == "Answer"
    assert Usage(1, 2, None) in events


async def test_openrouter_keep_alive_comments_are_ignored(
    server: ProviderServer, store: KeyStore
) -> None:
    steps: list[bytes | float] = [
        b": OPENROUTER PROCESSING\n\n",
        0.05,
        b": OPENROUTER PROCESSING\n\n",
    ]
    server.reply_with(Reply(steps=steps + GREETING))
    events = await collect(client_for("openrouter", server, store), "openrouter")
    assert text_of(events) == "Hello, world"


async def test_events_split_at_every_byte_even_inside_a_utf8_character(
    server: ProviderServer, store: KeyStore
) -> None:
    text = "Grüße, 世界 🌍 — done"
    whole = b"".join(
        s for s in sse(chunk(text), chunk(finish="stop"), done=True) if isinstance(s, bytes)
    )
    server.reply_with(Reply(steps=[whole[i : i + 1] for i in range(len(whole))]))
    events = await collect(client_for("openai", server, store), "openai")
    assert text_of(events) == text


async def test_crlf_framing_and_multi_line_data_are_parsed(
    server: ProviderServer, store: KeyStore
) -> None:
    payload = json.dumps(chunk("line"), indent=1).replace("\n", "\r\ndata: ")
    server.reply_with(Reply(steps=[f"data: {payload}\r\n\r\n".encode(), b"data: [DONE]\r\n\r\n"]))
    events = await collect(client_for("openai", server, store), "openai")
    assert text_of(events) == "line"


async def test_an_error_object_mid_stream_is_an_error_with_the_text_so_far_delivered(
    server: ProviderServer, store: KeyStore
) -> None:
    server.reply_with(
        Reply(
            steps=sse(
                chunk("partial "),
                {
                    "error": {"code": "server_error", "message": "Provider disconnected"},
                    "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
                },
            )
        )
    )
    text, error = await text_until_error(client_for("openrouter", server, store), "openrouter")
    assert text == "partial "
    assert error.provider_message == "Provider disconnected"
    assert error.kind is ErrorKind.OVERLOADED


async def test_a_groq_stream_error_string_is_an_error(
    server: ProviderServer, store: KeyStore
) -> None:
    server.reply_with(Reply(steps=sse(chunk("a"), {"choices": [], "x_groq": {"error": "boom"}})))
    with pytest.raises(ProviderError) as raised:
        await collect(client_for("groq", server, store), "groq")
    assert raised.value.provider_message == "boom"


async def test_malformed_json_in_the_stream_is_a_protocol_error(
    server: ProviderServer, store: KeyStore
) -> None:
    server.reply_with(Reply(steps=[b"data: {not json\n\n"]))
    with pytest.raises(ProviderError) as raised:
        await collect(client_for("openai", server, store), "openai")
    assert raised.value.kind is ErrorKind.PROTOCOL
    assert "not valid JSON" in raised.value.message


async def test_a_stream_that_ends_without_done_or_finish_is_truncated(
    server: ProviderServer, store: KeyStore
) -> None:
    server.reply_with(Reply(steps=sse(chunk("Hel"), chunk("lo"))))
    with pytest.raises(ProviderError) as raised:
        await collect(client_for("deepseek", server, store), "deepseek")
    assert raised.value.kind is ErrorKind.TRUNCATED


@pytest.mark.parametrize(
    ("usage", "cached"),
    [
        ({"prompt_tokens_details": {"cached_tokens": 1024}}, 1024),  # OpenAI, Groq, xAI
        ({"prompt_cache_hit_tokens": 1024, "prompt_cache_miss_tokens": 976}, 1024),  # DeepSeek
    ],
)
async def test_cached_and_reasoning_tokens_are_read_for_pricing(
    usage: dict[str, object], cached: int, server: ProviderServer, store: KeyStore
) -> None:
    raw = {
        "prompt_tokens": 2000,
        "completion_tokens": 300,
        "completion_tokens_details": {"reasoning_tokens": 120},
        **usage,
    }
    server.reply_with(
        Reply(
            steps=sse(chunk("Hi"), chunk(finish="stop"), {"choices": [], "usage": raw}, done=True)
        )
    )
    events = await collect(client_for("openai", server, store), "openai")
    assert Usage(2000, 300, 120, cached_input_tokens=cached) in events
