"""Promises every provider call keeps, whatever the provider."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time

import pytest

from byok_tui.core.config import Config, ConfigError
from byok_tui.core.errors import ErrorKind
from byok_tui.core.registry import get_provider
from byok_tui.keys import KeyStore, NoApiKeyError, entry_name
from byok_tui.providers import client as client_module
from byok_tui.providers.client import ProviderClient
from byok_tui.providers.endpoints import base_url, override_variable
from byok_tui.providers.errors import ProviderError
from byok_tui.providers.pacing import RequestPacer
from byok_tui.providers.types import RateLimitWait, TextDelta
from tests.support.provider_client import (
    base_for,
    chat,
    client_for,
    collect,
    text_of,
    text_until_error,
)
from tests.support.provider_server import ProviderServer, Reply, provider_server, sse
from tests.support.threads import calls_on_this_thread

DONE = sse(
    {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}, done=True
)


async def test_no_key_is_raised_before_any_request_reaches_the_server(
    server: ProviderServer, store: KeyStore
) -> None:
    client = client_for("openai", server, store, key=None)
    with pytest.raises(NoApiKeyError, match="No API key for OpenAI"):
        await collect(client, "openai")
    assert server.requests == []


async def test_a_rotated_key_is_used_by_the_very_next_call(
    server: ProviderServer, store: KeyStore
) -> None:
    server.reply_with(Reply(steps=DONE))
    client = client_for("groq", server, store, key="gsk_first" + "1" * 40)
    async with client:
        provider = get_provider("groq")
        [e async for e in client.stream_chat(provider, chat())]
        store.set(entry_name("groq"), "gsk_second" + "2" * 40)
        [e async for e in client.stream_chat(provider, chat())]
    assert [r.header("authorization") for r in server.requests] == [
        "Bearer gsk_first" + "1" * 40,
        "Bearer gsk_second" + "2" * 40,
    ]


async def test_a_per_bot_key_is_sent_instead_of_the_global_one(
    server: ProviderServer, store: KeyStore
) -> None:
    server.reply_with(Reply(steps=DONE))
    client = client_for("openai", server, store, key="sk-global-" + "g" * 30)
    async with client:
        events = [
            e
            async for e in client.stream_chat(
                get_provider("openai"), chat(), bot_key="sk-perbot-" + "b" * 30
            )
        ]
    assert text_of(events) == "ok"
    assert server.requests[0].header("authorization") == "Bearer sk-perbot-" + "b" * 30


@pytest.mark.parametrize("provider_id", ["openai", "anthropic", "google"])
async def test_a_redirect_is_not_followed_and_the_key_goes_nowhere_else(
    provider_id: str, server: ProviderServer, store: KeyStore
) -> None:
    key = "redirect-test-key-" + "r" * 20
    with provider_server() as elsewhere:
        server.reply_with(
            Reply(307, {"location": f"{elsewhere.base_url}/steal", "content-type": "text/plain"})
        )
        with pytest.raises(ProviderError) as raised:
            await collect(client_for(provider_id, server, store, key=key), provider_id)
        assert elsewhere.requests == []
    assert raised.value.kind is ErrorKind.PROTOCOL
    assert "never follows redirects" in raised.value.message
    assert len(server.requests) == 1


async def test_a_connection_dropped_mid_reply_is_reported_with_the_text_so_far(
    server: ProviderServer, store: KeyStore
) -> None:
    server.reply_with(
        Reply(steps=sse({"choices": [{"index": 0, "delta": {"content": "Half"}}]}), abort=True)
    )
    text, error = await text_until_error(client_for("openai", server, store), "openai")
    assert text == "Half"
    assert error.kind is ErrorKind.TRUNCATED


async def test_a_server_that_stops_sending_times_out(
    server: ProviderServer, store: KeyStore
) -> None:
    stalled = sse({"choices": [{"index": 0, "delta": {"content": "a"}}]})
    server.reply_with(Reply(steps=[*stalled, 3.0]))
    started = time.monotonic()
    with pytest.raises(ProviderError) as raised:
        await collect(client_for("openai", server, store, read_timeout=0.5), "openai")
    assert raised.value.kind is ErrorKind.TIMEOUT
    assert time.monotonic() - started < 2.5


async def test_a_server_that_accepts_and_never_answers_times_out(
    server: ProviderServer, store: KeyStore
) -> None:
    import socket

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)
    try:
        port = silent.getsockname()[1]
        client = ProviderClient(
            store,
            environ={
                "BYOK_TUI_OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
                "OPENAI_API_KEY": "sk-silent-" + "s" * 30,
            },
            timeouts=client_module.Timeouts(connect=1, read=0.5),
        )
        with pytest.raises(ProviderError) as raised:
            await collect(client, "openai")
    finally:
        silent.close()
    assert raised.value.kind is ErrorKind.TIMEOUT


async def test_stopping_a_reply_closes_the_connection(
    server: ProviderServer, store: KeyStore
) -> None:
    many = sse(*[{"choices": [{"index": 0, "delta": {"content": "x"}}]}] * 3)
    server.reply_with(Reply(steps=[*many, 0.3, *many * 50, 0.3, *many * 50]))
    client = client_for("openai", server, store)
    async with client:
        stream = client.stream_chat(get_provider("openai"), chat())
        async for event in stream:
            if isinstance(event, TextDelta):
                break
        await stream.aclose()  # what cancelling the UI's worker does
        for _ in range(40):
            if server.disconnects:
                break
            await asyncio.sleep(0.05)
    assert server.disconnects == ["/v1/chat/completions"]


async def test_an_html_page_from_a_proxy_is_a_protocol_error(
    server: ProviderServer, store: KeyStore
) -> None:
    server.reply_with(Reply(200, {"content-type": "text/html"}, [b"<html>Sign in to Wi-Fi</html>"]))
    with pytest.raises(ProviderError) as raised:
        await collect(client_for("openai", server, store), "openai")
    assert raised.value.kind is ErrorKind.PROTOCOL
    assert "HTML page" in raised.value.message


def test_plain_http_to_a_non_loopback_host_is_refused_for_key_providers() -> None:
    with pytest.raises(ConfigError, match="unencrypted"):
        base_url(
            get_provider("openai"), {"BYOK_TUI_OPENAI_BASE_URL": "http://10.0.0.5/v1"}, Config()
        )
    loopback = {"BYOK_TUI_OPENAI_BASE_URL": "http://127.0.0.1:8080/v1/"}
    assert base_url(get_provider("openai"), loopback, Config()) == "http://127.0.0.1:8080/v1"
    assert (
        base_url(
            get_provider("openai"), {"BYOK_TUI_OPENAI_BASE_URL": "https://gw.corp/v1"}, Config()
        )
        == "https://gw.corp/v1"
    )


def test_a_base_url_may_not_carry_credentials_or_a_query() -> None:
    for url in ("https://user:pw@gw.corp/v1", "https://gw.corp/v1?x=1"):
        with pytest.raises(ConfigError):
            base_url(get_provider("openai"), {"BYOK_TUI_OPENAI_BASE_URL": url}, Config())


def test_the_config_file_base_url_is_used_and_the_environment_wins(tmp_path: object) -> None:
    config = Config(None, {"providers": {"mistral": {"base_url": "https://eu.gw/v1"}}})
    mistral = get_provider("mistral")
    assert base_url(mistral, {}, config) == "https://eu.gw/v1"
    assert (
        base_url(mistral, {"BYOK_TUI_MISTRAL_BASE_URL": "https://env.gw/v1"}, config)
        == "https://env.gw/v1"
    )
    assert base_url(mistral, {}, Config()) == "https://api.mistral.ai/v1"


def test_the_pacer_waits_once_a_minute_is_full() -> None:
    now = [1000.0]
    pacer = RequestPacer(clock=lambda: now[0])
    assert [pacer.reserve("google", "m", 2) for _ in range(2)] == [0.0, 0.0]
    assert pacer.reserve("google", "m", 2) == 60.0
    now[0] += 30
    assert pacer.reserve("google", "m", 2) == 30.0
    assert pacer.reserve("google", "other", 2) == 0.0
    assert pacer.reserve("google", "m", None) == 0.0


async def test_a_rate_limited_model_reports_the_wait_before_sending(
    server: ProviderServer, store: KeyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", fake_sleep)
    gemini_done = (
        b'data: {"candidates":[{"content":{"parts":[{"text":"ok"}]},"finishReason":"STOP"}]}'
        b"\r\n\r\n"
    )
    server.reply_with(Reply(steps=[gemini_done]))
    client = client_for("google", server, store)
    request = chat("gemini-2.5-pro")  # the registry says 5 requests per minute
    async with client:
        waits = []
        for _ in range(6):
            async for event in client.stream_chat(get_provider("google"), request):
                if isinstance(event, RateLimitWait):
                    waits.append(event)
    assert len(waits) == 1
    assert waits[0].requests_per_minute == 5
    assert 55 < waits[0].seconds <= 60
    assert slept == [waits[0].seconds]
    assert len(server.requests) == 6


async def test_on_sent_is_called_once_the_request_is_on_the_wire_before_any_reply(
    server: ProviderServer, store: KeyStore
) -> None:
    text = {"choices": [{"index": 0, "delta": {"content": "hi"}}]}
    server.reply_with(Reply(steps=[0.3, *sse(text, done=True)]))
    client = client_for("openai", server, store)
    moments: list[str] = []
    async for event in client.stream_chat(
        get_provider("openai"), chat(), on_sent=lambda: moments.append("sent")
    ):
        moments.append(type(event).__name__)
    await client.aclose()
    assert moments[:2] == ["sent", "TextDelta"]
    assert moments.count("sent") == 1
    assert len(server.requests) == 1


async def test_the_http_client_is_made_off_the_event_loop(
    server: ProviderServer, store: KeyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading the TLS context of the HTTP client takes tens of milliseconds: the first
    request makes it in a worker thread, so the screen never waits for it."""
    server.reply_with(Reply(steps=DONE))
    made_in: list[bool] = []
    make = ProviderClient._client

    def watched(self: ProviderClient) -> object:
        made_in.append(threading.current_thread() is threading.main_thread())
        return make(self)

    monkeypatch.setattr(ProviderClient, "_client", watched)
    client = client_for("openai", server, store, key="sk-proj-" + "k" * 40)
    async with client:
        assert text_of(await collect(client, "openai")) == "ok"
        assert text_of(await collect(client, "openai")) == "ok"
    assert made_in and not any(made_in), "the HTTP client was made on the event loop"


async def test_the_key_store_is_read_off_the_event_loop(
    server: ProviderServer, store: KeyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A keyring may take tens of milliseconds to answer: the key a request made without one
    needs is read in a worker thread, so the screen never waits for it. Here a reply; a model
    list and a balance read theirs through the same key_for."""
    server.reply_with(Reply(steps=DONE))
    client = client_for("openai", server, store, key="sk-proj-" + "k" * 40)
    on_the_loop = calls_on_this_thread(
        monkeypatch, [(KeyStore, "get"), (KeyStore, "get_text"), (type(store), "load")]
    )
    async with client:
        assert text_of(await collect(client, "openai")) == "ok"
    assert on_the_loop == []


async def test_a_request_body_is_compact_utf8_json_and_says_so(
    server: ProviderServer, store: KeyStore
) -> None:
    """Text goes as written (no \\u escapes, which would double the bytes of most scripts),
    in a body whose length and type the request states."""
    from byok_tui.providers.types import ChatMessage, ChatRequest

    server.reply_with(Reply(steps=DONE))
    said = 'naïve 日本語 🙂 "quoted" \\ back\nslash'
    async with client_for("openai", server, store, key="sk-proj-" + "k" * 40) as client:
        request = ChatRequest(model="gpt-5.4-mini", messages=(ChatMessage("user", said),))
        [e async for e in client.stream_chat(get_provider("openai"), request)]
    [seen] = server.requests
    assert seen.header("content-type") == "application/json"
    assert seen.header("content-length") == str(len(seen.body))
    assert seen.json["messages"] == [{"role": "user", "content": said}]
    assert "日本語".encode() in seen.body and b"\\u" not in seen.body
    assert b": " not in seen.body and b", " not in seen.body


FIRST_REQUEST = """
import asyncio, sys
from byok_tui.core.paths import app_paths
from byok_tui.core.registry import get_provider
from byok_tui.keys import entry_name, open_key_store
from byok_tui.providers.client import ProviderClient, Timeouts
from byok_tui.providers.types import ChatMessage, ChatRequest

provider = get_provider("openai")
store = open_key_store(app_paths())
store.set(entry_name("openai"), "test-key-" + "k" * 24)
timeouts = Timeouts(connect=5, read=10, read_local=10)
client = ProviderClient(store, environ={sys.argv[1]: sys.argv[2]}, timeouts=timeouts)
client.prepare()
request = ChatRequest(model="m", messages=(ChatMessage("user", "Hi"),))
HTTP_STACK = {"anyio", "certifi", "h11", "httpcore", "httpx", "idna", "sniffio", "ssl"}


async def first() -> None:
    async with client:
        before = set(sys.modules)
        events = [event async for event in client.stream_chat(provider, request)]
        assert events, "no reply"
        loaded = sorted(m for m in set(sys.modules) - before if m.split(".")[0] in HTTP_STACK)
        print(" ".join(loaded) or "nothing")


asyncio.run(first())
"""


def test_a_prepared_client_s_first_request_loads_nothing_of_the_http_stack(
    server: ProviderServer,
) -> None:
    """The app's opening thread prepares the client: the first request then loads nothing of
    the HTTP stack on the event loop (anyio's asyncio backend, loaded by httpcore at its first
    request, held a message sent at start back ~40 ms)."""
    provider = get_provider("openai")
    server.reply_with(Reply(steps=DONE))
    environ = {**os.environ, "BYOK_TUI_KEYSTORE": "file"}
    variable, base = override_variable(provider), base_for(provider, server)
    done = subprocess.run(
        [sys.executable, "-c", FIRST_REQUEST, variable, base],
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "nothing", f"loaded at the first request: {done.stdout}"
