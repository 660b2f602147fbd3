"""The SQLite store: migrations, permissions, per-bot keys, concurrency, foreign files."""

from __future__ import annotations

import sqlite3
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from byok_tui.core.paths import app_paths
from byok_tui.core.records import BotConfig, KeySource
from byok_tui.core.registry import get_provider
from byok_tui.keys import entry_name, open_key_store, resolve_key
from byok_tui.storage.db import DatabaseError
from byok_tui.storage.schema import APPLICATION_ID, SCHEMA_VERSION
from byok_tui.storage.store import Store
from tests.support.keys import FAKE_KEYS, PER_BOT_KEY


@pytest.fixture
def db_path() -> Path:
    return app_paths().data_dir / "byok-tui.sqlite3"


def test_an_empty_file_is_migrated_to_the_current_schema(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    db_path.touch()
    Store(db_path)
    raw = sqlite3.connect(db_path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert raw.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"bots", "conversations", "messages", "settings"} <= tables


def test_the_database_file_is_private(db_path: Path) -> None:
    Store(db_path).create_bot(BotConfig("b", "openai", "gpt-5.5"))
    assert stat.S_IMODE(db_path.stat().st_mode) == 0o600


def test_a_default_bot_exists_on_first_start(db_path: Path) -> None:
    store = Store(db_path)
    bot = store.default_bot("google", "gemini-3.8-flash")
    assert store.default_bot("openai", "x").id == bot.id  # created once
    assert [b.name for b in store.bots()] == ["Default"]


def test_a_per_bot_key_is_used_for_that_bot_only_and_clearing_falls_back(db_path: Path) -> None:
    store = Store(db_path)
    keys = open_key_store(app_paths())
    keys.set(entry_name("openai"), FAKE_KEYS["openai"])
    openai = get_provider("openai")
    mine = store.create_bot(BotConfig("mine", "openai", "gpt-5.5"))
    other = store.create_bot(BotConfig("other", "openai", "gpt-5.5"))
    store.set_bot_key(mine.id, f"  {PER_BOT_KEY}\n")

    assert store.bot(mine.id).has_key
    assert resolve_key(openai, keys, bot_key=store.bot_key(mine.id)).value == PER_BOT_KEY
    resolved_other = resolve_key(openai, keys, bot_key=store.bot_key(other.id))
    assert (resolved_other.value, resolved_other.source) == (FAKE_KEYS["openai"], KeySource.GLOBAL)

    store.set_bot_key(mine.id, None)
    resolved = resolve_key(openai, keys, bot_key=store.bot_key(mine.id))
    assert (resolved.value, resolved.source) == (FAKE_KEYS["openai"], KeySource.GLOBAL)


def test_a_bot_object_never_carries_its_key(db_path: Path) -> None:
    store = Store(db_path)
    bot = store.create_bot(BotConfig("b", "openai", "gpt-5.5"))
    store.set_bot_key(bot.id, PER_BOT_KEY)
    assert PER_BOT_KEY not in repr(store.bot(bot.id))


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from byok_tui.core.records import BotConfig
    from byok_tui.storage.store import Store
    store = Store(Path(sys.argv[1]))
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, "from " + sys.argv[2])
    for i in range(int(sys.argv[3])):
        store.add_message(conversation.id, "user", f"{sys.argv[2]}-{i}")
    """
)


def test_two_processes_writing_at_once_lose_nothing(db_path: Path) -> None:
    Store(db_path)
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(db_path), name, "60"])
        for name in ("first", "second")
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    store = Store(db_path)
    bots = store.bots()
    assert len(bots) == 1  # both found or created the same default bot
    contents = {m.content for c in store.conversations(bots[0].id) for m in store.messages(c.id)}
    assert contents == {f"{n}-{i}" for n in ("first", "second") for i in range(60)}


@pytest.mark.parametrize(
    "content",
    [b"this is not a database at all" * 10, b"SQLite format 3\x00" + b"\xff" * 200],
    ids=["not sqlite", "damaged sqlite"],
)
def test_a_corrupt_database_is_reported_by_name_and_never_overwritten(
    db_path: Path, content: bytes
) -> None:
    db_path.parent.mkdir(parents=True)
    db_path.write_bytes(content)
    with pytest.raises(DatabaseError) as raised:
        Store(db_path)
    assert str(db_path) in str(raised.value)
    assert db_path.read_bytes() == content


def test_another_programs_database_is_refused_and_left_alone(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    foreign = sqlite3.connect(db_path)
    foreign.execute("CREATE TABLE recipes (name TEXT)")
    foreign.execute("INSERT INTO recipes VALUES ('soup')")
    foreign.commit()
    foreign.close()
    before = db_path.read_bytes()
    with pytest.raises(DatabaseError, match="another program's database"):
        Store(db_path)
    assert db_path.read_bytes() == before


def test_a_database_from_a_newer_byok_tui_is_refused(db_path: Path) -> None:
    Store(db_path).close()
    raw = sqlite3.connect(db_path)
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.commit()
    raw.close()
    with pytest.raises(DatabaseError, match="newer byok-tui"):
        Store(db_path)


def test_conversations_are_read_a_page_at_a_time_newest_first(db_path: Path) -> None:
    """A bot may have tens of thousands of conversations: they are read as many as are
    shown, and the next page follows the last one shown, even when several were updated
    in the same instant."""
    store = Store(db_path)
    bot = store.default_bot("openai", "gpt-5.4-mini")
    made = [store.create_conversation(bot.id, f"chat {n}") for n in range(7)]
    with store.transaction() as db:  # three of them in one instant
        db.execute(
            "UPDATE conversations SET updated = 5.0 WHERE id IN (?, ?, ?)",
            [made[1].id, made[2].id, made[3].id],
        )
    everything = store.conversations(bot.id)
    assert len(everything) == 7
    first = store.conversations(bot.id, limit=3)
    assert first == everything[:3]
    pages = [first]
    while page := store.conversations(bot.id, limit=3, after=pages[-1][-1]):
        pages.append(page)
    assert [c for page in pages for c in page] == everything
    assert store.conversation_count(bot.id) == 7
    assert [store.conversation_count(bot.id, newer_than=c) for c in everything] == list(range(7))
    assert not store.has_conversations(bot.id + 1) and store.has_conversations(bot.id)


def test_a_kept_reply_s_model_holds_for_its_conversation_until_the_bot_s_model_changes(
    db_path: Path,
) -> None:
    """A compare's reply kept: its conversation's next messages go to its provider and model
    (stored, so a later start keeps them); saving the bot with another provider or model
    gives every conversation of the bot the bot's model again; saving anything else does not."""
    from dataclasses import replace

    store = Store(db_path)
    bot = store.default_bot("openai", "gpt-5.4-mini")
    conversation = store.create_conversation(bot.id, "Compared")
    asked = store.add_message(conversation.id, "user", "2+2?")
    reply = store.add_message(
        conversation.id, "assistant", "Four.", provider="mistral", model="mistral-small-latest"
    )
    store.switch_to(asked.id)
    assert store.conversation(conversation.id).continues_on is None
    store.switch_to(reply.id, keep_its_model=True)
    assert store.conversation(conversation.id).continues_on == "mistral:mistral-small-latest"
    store.update_bot(bot.id, replace(bot.config, temperature=0.2))
    assert store.conversation(conversation.id).continues_on == "mistral:mistral-small-latest"
    store.update_bot(bot.id, replace(bot.config, model="gpt-5.5"))
    assert store.conversation(conversation.id).continues_on is None
