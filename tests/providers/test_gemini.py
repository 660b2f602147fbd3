"""Google Gemini: the key travels only in the `key` query parameter, never in a log."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from byok_tui.core.errors import ErrorKind
from byok_tui.core.logs import configure_logging
from byok_tui.core.registry import get_provider
from byok_tui.keys import KeyStore
from byok_tui.providers.errors import ProviderError
from byok_tui.providers.types import Done, ReasoningDelta, Usage
from tests.support.provider_client import chat, client_for, collect, text_of
from tests.support.provider_server import ProviderServer, Reply

KEY = "AIzaSy" + "G" * 33


def gemini_event(parts: list[dict], finish: str | None = None, usage: dict | None = None) -> bytes:
    import json

    candidate: dict = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    body: dict = {"candidates": [candidate]}
    if usage:
        body["usageMetadata"] = usage
    return f"data: {json.dumps(body)}\r\n\r\n".encode()  # Gemini frames end with CRLF CRLF


STREAM = [
    gemini_event([{"text": "Thinking it over", "thought": True}]),
    gemini_event([{"text": "Two"}]),
    gemini_event(
        [{"text": "."}],
        finish="STOP",
        usage={"promptTokenCount": 7, "candidatesTokenCount": 2, "totalTokenCount": 9},
    ),
]


async def test_the_key_is_only_in_the_query_string_and_the_body_is_gemini_shaped(
    server: ProviderServer, store: KeyStore
) -> None:
    server.reply_with(Reply(steps=STREAM))
    events = await collect(
        client_for("google", server, store, key=KEY),
        "google",
        chat("gemini-2.5-flash", system="Be brief.", temperature=0.4, max_tokens=55),
    )
    seen = server.requests[0]
    path, _, query = seen.target.partition("?")
    assert path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    assert sorted(query.split("&")) == ["alt=sse", f"key={KEY}"]
    assert all(KEY not in value for value in seen.headers.values())
    body = seen.json
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    assert body["generationConfig"] == {"maxOutputTokens": 55, "temperature": 0.4}
    assert ReasoningDelta("Thinking it over") in events
    assert text_of(events) == "Two."
    assert events[-2:] == [Usage(7, 2, None), Done("STOP")]


async def test_a_stream_without_finish_reason_is_truncated(
    server: ProviderServer, store: KeyStore
) -> None:
    server.reply_with(Reply(steps=STREAM[:2]))
    with pytest.raises(ProviderError) as raised:
        await collect(client_for("google", server, store), "google", chat("gemini-2.5-flash"))
    assert raised.value.kind is ErrorKind.TRUNCATED


async def test_a_bad_key_answered_with_400_is_an_auth_error(
    server: ProviderServer, store: KeyStore
) -> None:
    body = (
        b'{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.",'
        b'"status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.'
        b'ErrorInfo","reason":"API_KEY_INVALID"}]}}'
    )
    server.reply_with(Reply(400, {"content-type": "application/json"}, [body]))
    with pytest.raises(ProviderError) as raised:
        await collect(client_for("google", server, store, key=KEY), "google")
    assert raised.value.kind is ErrorKind.AUTH
    assert "Check the key type" in raised.value.remedy
    assert KEY not in raised.value.one_line()


async def test_the_key_never_reaches_a_debug_log(
    server: ProviderServer, store: KeyStore, tmp_path: Path
) -> None:
    log_file = tmp_path / "debug.log"
    root = logging.getLogger()
    saved = list(root.handlers), root.level
    configure_logging(log_file, stderr_warnings=False)
    try:
        server.reply_with(Reply(steps=STREAM))
        await collect(client_for("google", server, store, key=KEY), "google")
        server.reply_with(Reply(500, {"content-type": "application/json"}, [b"{}"]))
        with pytest.raises(ProviderError):
            await collect(client_for("google", server, store, key=KEY), "google")
    finally:
        for handler in list(root.handlers):
            handler.close()
            root.removeHandler(handler)
        for handler in saved[0]:
            root.addHandler(handler)
        root.setLevel(saved[1])
    text = log_file.read_text()
    assert "streamGenerateContent" in text  # httpx logged the request line, redacted
    assert KEY not in text


async def test_models_keep_only_generate_content_models(
    server: ProviderServer, store: KeyStore
) -> None:
    listing = (
        b'{"models":[{"name":"models/gemini-9-flash","displayName":"Gemini 9 Flash",'
        b'"inputTokenLimit":1048576,"supportedGenerationMethods":["generateContent"]},'
        b'{"name":"models/text-embedding-9","supportedGenerationMethods":["embedContent"]}]}'
    )
    server.reply_with(Reply(headers={"content-type": "application/json"}, steps=[listing]))
    async with client_for("google", server, store, key=KEY) as client:
        listed = await client.list_models(get_provider("google"))
    assert [(m.id, m.context_length) for m in listed] == [("gemini-9-flash", 1048576)]
    assert f"key={KEY}" in server.requests[0].target


async def test_thinking_tokens_are_billed_output_and_cached_tokens_are_read(
    server: ProviderServer, store: KeyStore
) -> None:
    # Gemini's candidatesTokenCount leaves out the thinking tokens, which are billed as output.
    usage = {
        "promptTokenCount": 900,
        "cachedContentTokenCount": 600,
        "candidatesTokenCount": 20,
        "thoughtsTokenCount": 80,
    }
    server.reply_with(Reply(steps=[gemini_event([{"text": "Ok."}], finish="STOP", usage=usage)]))
    events = await collect(client_for("google", server, store), "google")
    assert Usage(900, 100, 80, cached_input_tokens=600) in events
