"""Property tests: random and adversarial input to the stream parsers, the export importer and
the key file reader never crashes the process, never loses stored data, never yields a key."""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from byok_tui.core.records import BotConfig
from byok_tui.core.registry import get_provider
from byok_tui.core.sanitize import clean_line
from byok_tui.keys import KeyFileCorruptError, entry_name
from byok_tui.keys.file_store import FileKeyStore
from byok_tui.providers.errors import ProviderError
from byok_tui.providers.wire import anthropic, gemini, ollama, openai_compat
from byok_tui.storage.bot_fields import BotInputError
from byok_tui.storage.export_checks import ExportFormatError
from byok_tui.storage.store import Store
from byok_tui.storage.transfer import import_all

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


# A value a hostile file puts where a number (or anything) should be.
EDGE_NUMBERS = st.sampled_from(
    [10**30, 2**63, -(2**63) - 1, -1, 0, 1e308, -1e308, float("inf"), float("-inf"), float("nan")]
)
ODD_VALUES = st.one_of(
    EDGE_NUMBERS,
    EDGE_NUMBERS,
    EDGE_NUMBERS,
    EDGE_NUMBERS,
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.none(),
    st.booleans(),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=2),
)
UUIDS = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=8)
# Text byok-tui itself would write: no control, format (bidi) or surrogate characters.
PLAIN = st.characters(exclude_categories=("Cc", "Cf", "Cs"))


def valid_documents() -> st.SearchStrategy[dict[str, Any]]:
    """Exports byok-tui could have written: every table has rows to import."""
    bots = st.lists(
        st.fixed_dictionaries(
            {
                "uuid": UUIDS,
                "name": st.text(PLAIN, min_size=1, max_size=12).filter(str.strip),
                "provider": st.sampled_from(["openai", "groq", "ollama"]),
                "model": st.text(PLAIN, min_size=1, max_size=12).filter(str.strip),
                "system_prompt": st.text(PLAIN, max_size=12),
                "temperature": st.none() | st.floats(0, 2),
                "max_tokens": st.integers(1, 100_000),
            }
        ),
        min_size=1,
        max_size=3,
        unique_by=lambda b: b["uuid"],
    )
    messages = st.lists(
        st.fixed_dictionaries(
            {
                "uuid": UUIDS.map(lambda u: "m" + u),
                "role": st.sampled_from(["user", "assistant"]),
                "content": st.text(PLAIN, max_size=20),
                "reasoning": st.text(PLAIN, max_size=5),
                "provider": st.none() | st.just("openai"),
                "model": st.none() | st.text(PLAIN, max_size=8),
                "key_source": st.none() | st.just("global"),
                "status": st.sampled_from(["complete", "partial", "error"]),
                "error_kind": st.none(),
                "error_message": st.none() | st.text(PLAIN, max_size=10),
                "input_tokens": st.none() | st.integers(0, 10**6),
                "output_tokens": st.none() | st.integers(0, 10**6),
                "created": st.floats(0, 2e9),
            }
        ),
        min_size=1,
        max_size=3,
    )

    conversations = st.lists(
        st.fixed_dictionaries(
            {
                "uuid": UUIDS.map(lambda u: "c" + u),
                "title": st.text(PLAIN, max_size=12),
                "created": st.floats(0, 2e9),
                "updated": st.floats(0, 2e9),
                "messages": messages,
            }
        ),
        min_size=1,
        max_size=3,
        unique_by=lambda c: str(c["uuid"]),
    )

    settings_rows = st.dictionaries(st.text(PLAIN, max_size=6), st.text(PLAIN, max_size=6))

    @st.composite
    def documents(draw: st.DrawFn) -> dict[str, Any]:
        drawn_bots = draw(bots)
        drawn = draw(conversations)
        # Each conversation belongs to one of the bots drawn (the strategies above are made
        # once; only this choice depends on what was drawn).
        bot_uuids = st.sampled_from([b["uuid"] for b in drawn_bots])
        conversations_drawn = [{**c, "bot_uuid": draw(bot_uuids)} for c in drawn]
        seen: set[str] = set()  # a message's uuid is unique across the whole document
        for conversation in conversations_drawn:
            kept_messages: list[dict[str, Any]] = []
            for message in cast(list[dict[str, Any]], conversation["messages"]):
                if message["uuid"] not in seen:
                    seen.add(message["uuid"])
                    kept_messages.append(message)
            conversation["messages"] = kept_messages
        return {
            "format": "byok-tui-export",
            "version": 1,
            "bots": drawn_bots,
            "conversations": conversations_drawn,
            "settings": draw(settings_rows),
        }

    return documents()


# Made once: made again at each draw, its composite read the module's source to check it uses
# `draw` (Hypothesis' reflection), and every strategy in it had its checks redone.
VALID_DOCUMENTS = valid_documents()


def leaves(value: Any) -> list[tuple[Any, Any]]:
    """(container, key) for every place a value sits in a JSON document."""
    found: list[tuple[Any, Any]] = []
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else []
    )
    for key, inner in items:
        found.append((value, key))
        found.extend(leaves(inner))
    return found


NUMERIC_FIELDS = {
    "version",
    "temperature",
    "max_tokens",
    "created",
    "updated",
    "input_tokens",
    "output_tokens",
}


@st.composite
def one_value_spoiled(draw: st.DrawFn) -> dict[str, Any]:
    """A well-formed export with one value, anywhere in it, replaced by a hostile one."""
    document = draw(VALID_DOCUMENTS)
    places = leaves(document)
    if draw(st.integers(0, 3)):  # mostly one of the numbers: each must be range-checked
        places = [(container, key) for container, key in places if key in NUMERIC_FIELDS]
    container, key = places[draw(st.integers(0, len(places) - 1))]
    container[key] = draw(ODD_VALUES)
    return document


def hostile_exports() -> st.SearchStrategy[bytes]:
    return st.one_of(
        st.binary(max_size=200),
        JSON_VALUES.map(lambda v: json.dumps(v).encode()),
        VALID_DOCUMENTS.map(lambda v: json.dumps(v).encode()),
        one_value_spoiled().map(lambda v: json.dumps(v).encode()),
        one_value_spoiled().map(lambda v: json.dumps(v).encode()),
    )


def every_row(store: Store) -> dict[str, set[tuple[Any, ...]]]:
    """Every row of every table, as tuples of plain values (k included). Not the search
    index's own tables: derived from messages and titles, their pages change as it is
    rewritten (search tests prove it finds what the tables hold)."""
    connection = store.connection()
    names = connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
    tables = [r[0] for r in names if "_fts" not in r[0]]
    return {
        table: {tuple(row) for row in connection.execute(f"SELECT * FROM {table}")}  # noqa: S608
        for table in tables
    }


def uuids(store: Store, table: str) -> set[str]:
    return {r[0] for r in store.connection().execute(f"SELECT uuid FROM {table}")}  # noqa: S608


def store_with_data_to_keep(tmp_path: Path) -> Store:
    """A database of its own holding a bot, a conversation, a message and a setting: a copy
    of one made once (making and upgrading a database for each example was a third of the
    test's time)."""
    template = tmp_path / "template.sqlite3"
    if not template.exists():
        store = Store(template)
        kept = store.create_bot(BotConfig("Kept", "openai", "gpt-5.5"))
        conversation = store.create_conversation(kept.id, "kept")
        store.add_message(conversation.id, "user", "kept")
        store.set_setting("kept", "yes")
        store.close()
    copy = tmp_path / f"{uuid.uuid4().hex}.sqlite3"
    shutil.copyfile(template, copy)
    return Store(copy)


@pytest.mark.long(10)
@settings(PROPERTY, max_examples=400)
@given(raw=hostile_exports())
def test_a_hostile_export_never_crashes_and_never_loses_or_adds_data(
    tmp_path: Path, raw: bytes
) -> None:
    store = store_with_data_to_keep(tmp_path)
    try:
        before = every_row(store)
        try:
            import_all(store, raw)
        except (ExportFormatError, BotInputError):
            assert every_row(store) == before  # all or nothing
            return
        document = json.loads(raw)
        after = every_row(store)
        for table in before:  # nothing that was there is lost or changed
            assert before[table] <= after[table], table
        wanted_bots = {b["uuid"] for b in document["bots"]}
        wanted_conversations = {c["uuid"] for c in document["conversations"]}
        wanted_messages = {m["uuid"] for c in document["conversations"] for m in c["messages"]}
        for table, wanted in (
            ("bots", wanted_bots),
            ("conversations", wanted_conversations),
            ("messages", wanted_messages),
        ):
            old = {row[1] for row in before[table]}  # uuid is each table's second column
            assert uuids(store, table) == old | wanted, table  # all of it, and nothing else
        assert {r[0] for r in after["settings"]} == {r[0] for r in before["settings"]} | {
            clean_line(name) for name in document["settings"]
        }
        assert all(store.bot_key(b.id) is None for b in store.bots())
    finally:
        store.close()


def test_a_huge_number_in_an_import_is_a_clear_error_and_changes_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path / "huge.sqlite3")
    document = {
        "format": "byok-tui-export",
        "version": 1,
        "bots": [{"uuid": "b", "name": "B", "provider": "openai", "model": "m"}],
        "conversations": [
            {
                "uuid": "c",
                "bot_uuid": "b",
                "title": "t",
                "created": 1.0,
                "updated": 1.0,
                "messages": [
                    {
                        "uuid": "m",
                        "role": "user",
                        "content": "x",
                        "status": "complete",
                        "input_tokens": 10**30,
                        "created": 1.0,
                    }
                ],
            }
        ],
        "settings": {},
    }
    try:
        before = every_row(store)
        with pytest.raises(ExportFormatError, match="input_tokens"):
            import_all(store, json.dumps(document).encode())
        assert every_row(store) == before
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
