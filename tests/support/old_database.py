"""A database as an earlier byok-tui left it: the schema up to a version, rows written with
plain SQL (today's store would write columns that version did not have)."""

from __future__ import annotations

import sqlite3
import time
import uuid
from pathlib import Path

import pytest

from byok_tui.storage import db, schema


def old_database(
    path: Path, version: int, messages: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database at schema `version` with one bot, one conversation titled "Kept from
    before" and `messages` in it (user and assistant in turn)."""
    with monkeypatch.context() as old:
        old.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:version])
        old.setattr(schema, "SCHEMA_VERSION", version)
        db.connect(path).close()
    now = time.time()
    with sqlite3.connect(path) as raw:
        bot = raw.execute(
            "INSERT INTO bots (uuid, name, provider, model, created, updated)"
            " VALUES (?, 'Default', 'openai', 'gpt-5.5', ?, ?)",
            (str(uuid.uuid4()), now, now),
        ).lastrowid
        conversation = raw.execute(
            "INSERT INTO conversations (uuid, bot_id, title, created, updated)"
            " VALUES (?, ?, 'Kept from before', ?, ?)",
            (str(uuid.uuid4()), bot, now, now),
        ).lastrowid
        raw.executemany(
            "INSERT INTO messages (uuid, conversation_id, role, content, status, created,"
            " updated) VALUES (?, ?, ?, ?, 'complete', ?, ?)",
            [
                (str(uuid.uuid4()), conversation, ("user", "assistant")[n % 2], text, now, now)
                for n, text in enumerate(messages)
            ],
        )
    raw.close()
