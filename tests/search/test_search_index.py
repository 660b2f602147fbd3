"""Search finds every message and title: words, prefixes and phrases, newest first, kept up
to date by the database itself, and an existing database is indexed on upgrade."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from byok_tui.core.paths import app_paths
from byok_tui.core.records import MATCH_END, MATCH_START, BotConfig
from byok_tui.storage import db, schema
from byok_tui.storage.search import fts_query
from byok_tui.storage.store import Store
from tests.support.old_database import old_database


@pytest.fixture
def store() -> Store:
    return Store(app_paths().data_dir / "byok-tui.sqlite3")


def found(store: Store, typed: str, **kwargs: int) -> list[tuple[str, str]]:
    """(role, snippet with the match in [brackets]) of each hit."""
    return [
        (hit.role, hit.snippet.replace(MATCH_START, "[").replace(MATCH_END, "]"))
        for hit in store.search.search(typed, **kwargs)
    ]


def test_words_prefixes_and_phrases_are_found(store: Store) -> None:
    bot = store.default_bot("openai", "gpt-5.5")
    chat = store.create_conversation(bot.id, "Streaming")
    store.add_message(chat.id, "user", "How do I retry after a 429?")
    store.add_message(chat.id, "assistant", "Wait, then retry: the header says after how long.")
    store.add_message(chat.id, "user", "And the streams?")

    assert found(store, "retry") == [
        ("assistant", "Wait, then [retry]: the header says after how long."),
        ("user", "How do I [retry] after a 429?"),
    ]
    assert found(store, '"retry after"') == [("user", "How do I [retry after] a 429?")]
    assert found(store, "stream*") == [
        ("title", "[Streaming]"),
        ("user", "And the [streams]?"),
    ]
    assert found(store, "retry header") == [
        ("assistant", "Wait, then [retry]: the [header] says after how long.")
    ]
    assert found(store, "nowhere") == []


def test_a_reply_is_found_by_its_final_text_and_a_deleted_conversation_is_gone(
    store: Store,
) -> None:
    bot = store.default_bot("openai", "gpt-5.5")
    chat = store.create_conversation(bot.id, "First title")
    reply = store.add_message(chat.id, "assistant", "", status="partial")
    store.save_reply(reply.id, content="half of it", reasoning="", status="partial")
    store.save_reply(reply.id, content="the whole answer", reasoning="", status="complete")
    assert found(store, "half") == []
    assert found(store, "whole") == [("assistant", "the [whole] answer")]

    store.rename_conversation(chat.id, "Renamed")
    assert found(store, "first") == []
    assert found(store, "renamed") == [("title", "[Renamed]")]

    store.delete_conversation(chat.id)
    assert found(store, "whole") == [] and found(store, "renamed") == []


def test_a_search_can_keep_to_one_bot_and_shows_where_each_hit_is(store: Store) -> None:
    writer = store.create_bot(BotConfig("Writer", "openai", "gpt-5.5"))
    coder = store.create_bot(BotConfig("Coder", "openai", "gpt-5.5"))
    for bot in (writer, coder):
        chat = store.create_conversation(bot.id, f"{bot.config.name}'s chat")
        store.add_message(chat.id, "user", "a shared word: kumquat")
    hits = store.search.search("kumquat", bot_id=coder.id)
    assert [(h.bot_name, h.title, h.role) for h in hits] == [("Coder", "Coder's chat", "user")]
    assert hits[0].message_id is not None and hits[0].created > 0


def test_the_newest_hits_come_first_up_to_the_limit(store: Store) -> None:
    bot = store.default_bot("openai", "gpt-5.5")
    chat = store.create_conversation(bot.id, "Many")
    for number in range(30):
        store.add_message(chat.id, "user", f"note {number}")
    assert found(store, "note", limit=3) == [
        ("user", "[note] 29"),
        ("user", "[note] 28"),
        ("user", "[note] 27"),
    ]


def test_a_long_message_shows_a_snippet_around_the_match_on_one_line(store: Store) -> None:
    bot = store.default_bot("openai", "gpt-5.5")
    chat = store.create_conversation(bot.id, "Long")
    words = " ".join(f"w{n}" for n in range(200))
    store.add_message(chat.id, "assistant", f"{words}\n\nthe needle\nis here\n\n{words}")
    [(_role, snippet)] = found(store, "needle")
    assert "\n" not in snippet and "[needle]" in snippet
    assert len(snippet.split()) <= 14 and snippet.startswith("…") and snippet.endswith("…")


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_nothing_typed_is_ever_a_query_error(typed: str) -> None:
    """Whatever is typed (quotes, stars, FTS5 operators, column filters): a result, never an
    error."""
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE VIRTUAL TABLE t USING fts5(content)")
    connection.execute("INSERT INTO t VALUES ('retry after NEAR AND OR NOT content')")
    query = fts_query(typed)
    if query is not None:
        connection.execute("SELECT rowid FROM t WHERE t MATCH ?", (query,)).fetchall()


@pytest.mark.parametrize(
    "typed", ["content:retry", "NOT retry", "retry OR after", "NEAR(retry after)", "-retry"]
)
def test_search_syntax_typed_is_read_as_words(store: Store, typed: str) -> None:
    bot = store.default_bot("openai", "gpt-5.5")
    chat = store.create_conversation(bot.id, "Syntax")
    store.add_message(chat.id, "user", "retry after")
    store.search.search(typed)  # no error; the words are looked for as words


def test_an_existing_database_is_indexed_on_upgrade_with_progress(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = app_paths().data_dir / "byok-tui.sqlite3"
    path.parent.mkdir(parents=True, exist_ok=True)
    messages = [f"older message {number}" for number in range(25)]
    old_database(path, schema.SEARCH_INDEX_MIGRATION - 1, messages, monkeypatch)
    monkeypatch.setattr(db, "INDEX_BATCH", 10)
    steps: list[tuple[int, int]] = []
    upgraded = Store(path, progress=lambda done, total: steps.append((done, total)))
    assert steps == [(10, 25), (20, 25), (25, 25)]
    assert len(upgraded.search.search("older")) == 25
    assert found(upgraded, "kept") == [("title", "[Kept] from before")]
