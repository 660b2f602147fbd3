"""Content from the network is untrusted: no escape sequence reaches the terminal raw, and no
broken or hostile stream can crash the app, grow memory without bound, or run forever."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from byok_tui.core.errors import ErrorKind
from byok_tui.core.sanitize import strip_terminal_controls
from byok_tui.keys import KeyStore
from byok_tui.providers.errors import ProviderError
from byok_tui.providers.types import TextDelta
from byok_tui.providers.wire import common as wire
from tests.support.cli import run_cli
from tests.support.provider_client import client_for, collect, text_of, text_until_error
from tests.support.provider_server import ProviderServer, Reply, sse

ESCAPES = {
    "colour": "\x1b[31mred\x1b[0m",
    "OSC 52 clipboard write": "\x1b]52;c;ZXZpbCBjb21tYW5k\x07",
    "OSC 8 link": "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
    "window title": "\x1b]0;pwned\x07",
    "clear screen (8-bit CSI)": "\x9b2J",
    "DCS": "\x1bPq#0;2;0;0;0\x1b\\",
}


@pytest.mark.parametrize("sequence", ESCAPES.values(), ids=ESCAPES.keys())
def test_escape_sequences_are_removed_and_text_kept(sequence: str) -> None:
    cleaned = strip_terminal_controls(f"before {sequence} after")
    assert "\x1b" not in cleaned
    assert not any(0x80 <= ord(c) <= 0x9F for c in cleaned)
    assert cleaned.startswith("before ")
    assert cleaned.endswith(" after")


BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


@given(st.text(st.characters() | st.sampled_from(BIDI_CONTROLS + "\x1b\x9b\x9d")))
def test_no_control_character_but_newline_and_tab_survives(text: str) -> None:
    cleaned = strip_terminal_controls(text)
    assert all(c in "\n\t" or not (ord(c) < 32 or 0x7F <= ord(c) <= 0x9F) for c in cleaned)
    assert not any(c in BIDI_CONTROLS for c in cleaned)


@given(st.text(st.characters() | st.sampled_from(BIDI_CONTROLS + "\x1b\n\t")))
def test_a_one_line_field_is_safe_and_on_one_line(text: str) -> None:
    from byok_tui.core.sanitize import clean_line

    line = clean_line(text)
    assert line == strip_terminal_controls(line) and line == line.strip()
    assert not any(c in line for c in "\n\r\t")


def test_reply_text_is_made_safe_when_it_arrives() -> None:
    assert TextDelta("a\x1b]52;c;eA==\x07b").text == "ab"


def test_ask_never_writes_an_escape_sequence_to_the_terminal(server: ProviderServer) -> None:
    hostile = "".join(ESCAPES.values())
    server.reply_with(
        Reply(
            steps=sse(
                {"choices": [{"index": 0, "delta": {"content": f"safe {hostile} text"}}]},
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                done=True,
            )
        )
    )
    env = {"BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1", "GROQ_API_KEY": "gsk_x" * 9}
    result = run_cli("ask", "-p", "groq", "hi", env=env)
    assert result.returncode == 0
    assert "\x1b" not in result.stdout
    assert "safe" in result.stdout
    assert "text" in result.stdout


def test_an_error_body_with_escapes_is_shown_clean(server: ProviderServer) -> None:
    body = b'{"error":{"message":"bad \\u001b]52;c;eA==\\u0007 key"}}'
    server.reply_with(Reply(401, {"content-type": "application/json"}, [body]))
    env = {"BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1", "GROQ_API_KEY": "gsk_x" * 9}
    result = run_cli("ask", "-p", "groq", "hi", env=env)
    assert result.returncode == 4
    assert "\x1b" not in result.stderr
    assert "(provider said: bad key)" in result.stderr  # the whole sequence went, not just ESC
    assert "52;c" not in result.stderr


async def test_an_oversized_reply_stops_with_a_clear_error_and_keeps_what_came(
    server: ProviderServer, store: KeyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wire, "MAX_REPLY_CHARS", 50_000)
    chunk = {"choices": [{"index": 0, "delta": {"content": "x" * 10_000}}]}
    server.reply_with(Reply(steps=sse(*[chunk] * 20)))
    text, error = await text_until_error(client_for("openai", server, store), "openai")
    assert error.kind is ErrorKind.TOO_LARGE
    assert "far longer than any real one" in error.message
    assert 40_000 <= len(text) <= 60_000


async def test_an_endless_line_is_refused_before_memory_grows(
    server: ProviderServer, store: KeyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wire, "MAX_EVENT_BYTES", 100_000)
    server.reply_with(Reply(steps=[b"data: " + b"y" * 20_000] * 10))
    with pytest.raises(ProviderError) as raised:
        await collect(client_for("openai", server, store), "openai")
    assert raised.value.kind is ErrorKind.TOO_LARGE
    assert "too large" in raised.value.message


async def test_a_stream_that_never_ends_is_cut_off(
    server: ProviderServer, store: KeyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wire, "MAX_STREAM_SECONDS", 1.0)
    server.reply_with(Reply(steps=[b": keep-alive\n\n", 0.1] * 60))  # 6 s of comments
    with pytest.raises(ProviderError) as raised:
        await collect(client_for("openrouter", server, store), "openrouter")
    assert raised.value.kind is ErrorKind.TOO_LARGE
    assert "went on for over" in raised.value.message


async def test_invalid_utf8_in_a_stream_does_not_crash(
    server: ProviderServer, store: KeyStore
) -> None:
    server.reply_with(
        Reply(
            steps=[
                b'data: {"choices":[{"index":0,"delta":{"content":"ok \xff\xfe end"}}]}\n\n',
                b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
                b"data: [DONE]\n\n",
            ]
        )
    )
    events = await collect(client_for("openai", server, store), "openai")
    assert text_of(events).startswith("ok ")
    assert text_of(events).endswith(" end")


async def test_invalid_utf8_in_ndjson_is_a_clear_error(store: KeyStore) -> None:
    from tests.providers.test_ollama import NDJSON, ollama_client
    from tests.support.provider_server import provider_server

    with provider_server() as server:
        server.reply_with(Reply(headers=NDJSON, steps=[b'{"message":{"content":"\xff"}}\n']))
        with pytest.raises(ProviderError) as raised:
            await collect(ollama_client(server, store), "ollama")
    assert raised.value.kind is ErrorKind.PROTOCOL
    assert "not UTF-8" in raised.value.message
