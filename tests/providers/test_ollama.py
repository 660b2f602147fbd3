"""Ollama: NDJSON streaming, /api/tags discovery, OLLAMA_HOST, and never a key."""

from __future__ import annotations

import json

import pytest

from byok_tui.core.errors import ErrorKind
from byok_tui.core.registry import get_provider
from byok_tui.keys import KeyStore
from byok_tui.providers.client import ProviderClient
from byok_tui.providers.endpoints import parse_ollama_host
from byok_tui.providers.errors import ProviderError
from byok_tui.providers.types import Done, ReasoningDelta, Usage
from tests.support.provider_client import chat, collect, text_of
from tests.support.provider_server import ProviderServer, Reply

OLLAMA = get_provider("ollama")
NDJSON = {"content-type": "application/x-ndjson"}


def line(**fields: object) -> bytes:
    return (json.dumps(fields) + "\n").encode()


def ollama_client(server: ProviderServer, store: KeyStore) -> ProviderClient:
    host = server.base_url.removeprefix("http://")
    return ProviderClient(store, environ={"OLLAMA_HOST": host})


async def test_chat_streams_ndjson_through_ollama_host_with_no_key(
    server: ProviderServer, store: KeyStore
) -> None:
    whole = (
        line(message={"role": "assistant", "content": "", "thinking": "hmm"}, done=False)
        + line(message={"role": "assistant", "content": "Hel"}, done=False)
        + line(message={"role": "assistant", "content": "lo"}, done=False)
        + line(
            message={"role": "assistant", "content": ""},
            done=True,
            done_reason="stop",
            prompt_eval_count=5,
            eval_count=2,
        )
    )
    server.reply_with(Reply(headers=NDJSON, steps=[whole[:7], whole[7:40], whole[40:]]))
    events = await collect(
        ollama_client(server, store),
        "ollama",
        chat("llama3.2", system="sys", temperature=0.1, max_tokens=9),
    )
    assert text_of(events) == "Hello"
    assert ReasoningDelta("hmm") in events
    assert events[-2:] == [Usage(5, 2), Done("stop")]
    seen = server.requests[0]
    assert seen.target == "/api/chat"
    assert seen.header("authorization") is None
    assert "ollama" not in " ".join(v for k, v in seen.headers.items() if k.lower() != "host")
    assert seen.json["options"] == {"num_predict": 9, "temperature": 0.1}
    assert seen.json["messages"][0] == {"role": "system", "content": "sys"}


async def test_an_error_line_mid_stream_is_an_error(
    server: ProviderServer, store: KeyStore
) -> None:
    server.reply_with(
        Reply(
            headers=NDJSON,
            steps=[line(message={"content": "a"}, done=False), line(error="model runner crashed")],
        )
    )
    with pytest.raises(ProviderError) as raised:
        await collect(ollama_client(server, store), "ollama", chat("llama3.2"))
    assert raised.value.provider_message == "model runner crashed"


async def test_a_stream_without_done_is_truncated(server: ProviderServer, store: KeyStore) -> None:
    server.reply_with(Reply(headers=NDJSON, steps=[line(message={"content": "a"}, done=False)]))
    with pytest.raises(ProviderError) as raised:
        await collect(ollama_client(server, store), "ollama", chat("llama3.2"))
    assert raised.value.kind is ErrorKind.TRUNCATED


async def test_models_are_discovered_from_api_tags(server: ProviderServer, store: KeyStore) -> None:
    tags = {
        "models": [{"name": "llama3.2:latest", "model": "llama3.2:latest"}, {"name": "qwen3:8b"}]
    }
    server.reply_with(
        Reply(headers={"content-type": "application/json"}, steps=[json.dumps(tags).encode()])
    )
    async with ollama_client(server, store) as client:
        listed = await client.list_models(OLLAMA)
    assert [(m.id, m.free) for m in listed] == [("llama3.2:latest", True), ("qwen3:8b", True)]
    assert server.requests[0].target == "/api/tags"


async def test_ollama_not_running_says_how_to_start_it(store: KeyStore) -> None:
    client = ProviderClient(store, environ={"OLLAMA_HOST": "127.0.0.1:9"})
    with pytest.raises(ProviderError) as raised:
        await collect(client, "ollama", chat("llama3.2"))
    assert raised.value.kind is ErrorKind.NETWORK
    assert "ollama serve" in raised.value.remedy


@pytest.mark.parametrize(
    ("status", "body", "remedy"),
    [
        (401, b'{"error":"unauthorized","signin_url":"https://ollama.com/connect"}', "signin"),
        (403, b"", "OLLAMA_ORIGINS"),
    ],
)
async def test_a_refusal_from_ollama_gets_a_remedy_for_a_local_runtime_not_for_a_key(
    server: ProviderServer, store: KeyStore, status: int, body: bytes, remedy: str
) -> None:
    """Ollama takes no key: its 401 (a cloud model, not signed in) or 403 (a proxy, its
    allowed origins) never tells the user to regenerate a key in a console."""
    server.reply_with(Reply(status, {"content-type": "application/json"}, [body]))
    with pytest.raises(ProviderError) as raised:
        await collect(ollama_client(server, store), "ollama", chat("gpt-oss:120b-cloud"))
    said = raised.value.one_line()
    assert remedy in said
    for wrong in ("API key", "regenerate", "console", "The key"):
        assert wrong not in said, said


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", "http://127.0.0.1:11434"),
        ("127.0.0.1", "http://127.0.0.1:11434"),
        (":56789", "http://127.0.0.1:56789"),
        ("0.0.0.0:11434", "http://127.0.0.1:11434"),
        ("https://ollama.example.com", "https://ollama.example.com:11434"),
        ("http://box:8080/prefix/", "http://box:8080/prefix"),
        ("[::1]:1234", "http://[::1]:1234"),
    ],
)
def test_ollama_host_is_read_as_the_official_client_reads_it(value: str, expected: str) -> None:
    assert parse_ollama_host(value) == expected
