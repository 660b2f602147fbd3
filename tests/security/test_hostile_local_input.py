"""Property tests: random and adversarial input to the stream parsers, the export importer and
the key file reader never crashes the process, never loses stored data, never yields a key."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from byok_tui.keys import KeyFileCorruptError, entry_name
from byok_tui.keys.file_store import FileKeyStore
from byok_tui.providers.errors import ProviderError
from byok_tui.providers.registry import get_provider
from byok_tui.providers.wire import anthropic, gemini, ollama, openai_compat
from byok_tui.storage.bot_fields import BotInputError
from byok_tui.storage.store import BotConfig, Store
from byok_tui.storage.transfer import ExportFormatError, import_all

PROPERTY = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


class Chunks(httpx.AsyncByteStream):
    """The bytes a server would send, in the pieces it sent them in."""

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk


def response(chunks: list[bytes], content_type: str) -> httpx.Response:
    return httpx.Response(
        200,
        headers={"content-type": content_type},
        stream=Chunks(chunks),
        request=httpx.Request("POST", "http://127.0.0.1/x"),
    )


SSE_PIECES = st.lists(
    st.one_of(
        st.binary(max_size=64),
        st.sampled_from(
            [
                b"data: ",
                b"\n",
                b"\r\n",
                b"\n\n",
                b": comment\n",
                b"event: error\n",
                b"data: [DONE]\n\n",
                b'data: {"choices":[{"delta":{"content":"a"}}]}',
                b'data: {"type":"message_stop"}\n\n',
                b'{"error":{"message":"x"}}',
                b'data: {"candidates":[{"finishReason":"STOP"}]}\r\n\r\n',
            ]
        ),
    ),
    max_size=30,
)

FAMILIES = {"openai": openai_compat, "anthropic": anthropic, "google": gemini}


@PROPERTY
@given(pieces=SSE_PIECES, family=st.sampled_from(sorted(FAMILIES)))
async def test_the_sse_parsers_only_yield_events_or_raise_provider_errors(
    pieces: list[bytes], family: str
) -> None:
    provider = get_provider(family)
    stream = FAMILIES[family].parse_stream(provider, response(pieces, "text/event-stream"))
    try:
        async for _event in stream:
            pass
    except ProviderError:
        pass


@PROPERTY
@given(
    pieces=st.lists(
        st.one_of(
            st.binary(max_size=64),
            st.sampled_from(
                [
                    b"\n",
                    b'{"message":{"content":"a"},"done":false}\n',
                    b'{"done":true}\n',
                    b'{"error":"x"}\n',
                    b"[1,2]\n",
                    b"null\n",
                ]
            ),
        ),
        max_size=30,
    )
)
async def test_the_ndjson_parser_only_yields_events_or_raises_provider_errors(
    pieces: list[bytes],
) -> None:
    stream = ollama.parse_stream(get_provider("ollama"), response(pieces, "application/x-ndjson"))
    try:
        async for _event in stream:
            pass
    except ProviderError:
        pass


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)


def hostile_exports() -> st.SearchStrategy[bytes]:
    shaped = st.fixed_dictionaries(
        {
            "format": st.just("byok-tui-export"),
            "version": st.sampled_from([1, 0, 2, "1"]),
            "bots": JSON_VALUES,
            "conversations": JSON_VALUES,
            "settings": JSON_VALUES,
        }
    )
    return st.one_of(
        st.binary(max_size=200),
        JSON_VALUES.map(lambda v: json.dumps(v).encode()),
        shaped.map(lambda v: json.dumps(v).encode()),
    )


@PROPERTY
@given(raw=hostile_exports())
def test_a_hostile_export_never_crashes_and_never_loses_or_adds_data(
    tmp_path: Path, raw: bytes
) -> None:
    store = Store(tmp_path / "property.sqlite3")
    try:
        if not store.bots():
            store.create_bot(BotConfig("Kept", "openai", "gpt-5.5"))
        before = [b.config for b in store.bots()]
        try:
            import_all(store, raw)
        except (ExportFormatError, BotInputError):
            assert [b.config for b in store.bots()] == before
        else:
            assert all(b.config in [x.config for x in store.bots()] for b in store.bots())
        assert all(store.bot_key(b.id) is None for b in store.bots())
    finally:
        store.close()


@PROPERTY
@given(
    raw=st.one_of(
        st.binary(max_size=300),
        JSON_VALUES.map(lambda v: json.dumps(v).encode()),
        st.dictionaries(st.text(max_size=20), JSON_VALUES, max_size=5).map(
            lambda v: json.dumps(v).encode()
        ),
    )
)
def test_the_key_file_reader_never_crashes_and_never_rewrites_a_bad_file(
    tmp_path: Path, raw: bytes
) -> None:
    path = tmp_path / "keys" / "keys.json"
    path.parent.mkdir(mode=0o700, exist_ok=True)
    path.write_bytes(raw)
    store = FileKeyStore(path)
    try:
        data = store.load()
    except KeyFileCorruptError as error:
        assert str(path) in str(error)
        with pytest.raises(KeyFileCorruptError):
            store.set(entry_name("openai"), "sk-new-value-123456")
        assert path.read_bytes() == raw
        return
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in data.items())
