"""Full-text search over every message and title (SQLite FTS5; the index is kept up to date
by the database's own triggers, see db.py).

What the user types is never handed to FTS5 as syntax: it is read as words, prefixes
(`stream*`) and phrases (`"retry after"`), each quoted, so no input can be an error or a
column filter. Newest first: ranking by relevance reads every match (~140 ms for a common word
in 100,000 messages); newest first stops after the page (~1 ms).
"""

from __future__ import annotations

import re
import sqlite3
from typing import TYPE_CHECKING, Any

from byok_tui.core.records import MATCH_END, MATCH_START, SearchHit
from byok_tui.core.sanitize import strip_terminal_controls

if TYPE_CHECKING:
    from byok_tui.storage.database import Database

DEFAULT_LIMIT = 50
SNIPPET_WORDS = 12
_TERMS = re.compile(r'"([^"]*)"?|(\S+)')
_SPACE = re.compile(r"\s+")


def fts_query(typed: str) -> str | None:
    """The FTS5 query for what the user typed: every word, prefix and phrase must match. None
    when nothing searchable was typed."""
    terms: list[str] = []
    for phrase, word in _TERMS.findall(strip_terminal_controls(typed)):
        text = phrase if phrase else word
        prefix = not phrase and text.endswith("*")
        text = text.rstrip("*") if prefix else text
        if not re.search(r"\w", text):
            continue  # punctuation alone matches nothing: leave it out
        quoted = '"' + text.replace('"', '""') + '"'
        terms.append(quoted + ("*" if prefix else ""))
    return " ".join(terms) if terms else None


def one_line(snippet: str) -> str:
    return _SPACE.sub(" ", snippet).strip()


def _hit(row: sqlite3.Row) -> SearchHit:
    """A row whose columns are named as SearchHit's fields."""
    fields: dict[str, Any] = dict(row)
    fields["snippet"] = one_line(fields["snippet"])
    return SearchHit(**fields)


class MessageSearch:
    def __init__(self, store: Database) -> None:
        self._store = store

    def search(
        self, typed: str, *, bot_id: int | None = None, limit: int = DEFAULT_LIMIT
    ) -> list[SearchHit]:
        """Conversations whose title matches, then messages, newest first; at most `limit`."""
        query = fts_query(typed)
        if query is None:
            return []
        db = self._store.connection()
        marks = {"start": MATCH_START, "end": MATCH_END, "words": SNIPPET_WORDS}
        args = {"query": query, "bot": bot_id, "limit": limit, **marks}
        titles = db.execute(
            "SELECT c.id AS conversation_id, c.title, c.bot_id, b.name AS bot_name,"
            " NULL AS message_id, 'title' AS role, c.updated AS created,"
            " highlight(titles_fts, 0, :start, :end) AS snippet"
            " FROM titles_fts JOIN conversations c ON c.id = titles_fts.rowid"
            " JOIN bots b ON b.id = c.bot_id"
            " WHERE titles_fts MATCH :query AND (:bot IS NULL OR c.bot_id = :bot)"
            " ORDER BY titles_fts.rowid DESC LIMIT :limit",
            args,
        ).fetchall()
        hits = [_hit(row) for row in titles]
        args["limit"] = limit - len(hits)
        messages = db.execute(
            "SELECT m.conversation_id, c.title, c.bot_id, b.name AS bot_name,"
            " m.id AS message_id, m.role, m.created,"
            " snippet(messages_fts, 0, :start, :end, '…', :words) AS snippet"
            " FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid"
            " JOIN conversations c ON c.id = m.conversation_id JOIN bots b ON b.id = c.bot_id"
            " WHERE messages_fts MATCH :query AND (:bot IS NULL OR c.bot_id = :bot)"
            " ORDER BY messages_fts.rowid DESC LIMIT :limit",
            args,
        ).fetchall()
        hits += [_hit(row) for row in messages]
        return hits
