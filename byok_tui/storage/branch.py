"""Reading the branch on screen of a conversation a part at a time, from its newest message
back: what a send needs (as much as fits the model), and what the transcript shows (a page,
then earlier pages as the reader scrolls up). Never reads a whole conversation, so a
conversation of a million messages costs what a short one does.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from byok_tui.core.attachments import Attachment, size_label
from byok_tui.core.records import Message, ShownToolCall, TranscriptPage

if TYPE_CHECKING:
    from byok_tui.storage.database import Database


def messages_from(cursor: sqlite3.Cursor) -> list[Message]:
    """Every row of `cursor` (messages.*) as a Message: columns found by place once, not by
    name in each row (a third of the time of reading 10,000 messages)."""
    names = [column[0] for column in cursor.description]
    places = [names.index(name) for name in Message.__slots__]
    fallback = Message.__slots__.index("fallback")
    messages = []
    for row in cursor:
        values = [row[place] for place in places]
        values[fallback] = bool(values[fallback])
        messages.append(Message(*values))
    return messages


class BranchReader:
    def __init__(self, store: Database) -> None:
        self._store = store

    def reply_and_newest(
        self, conversation_id: int, reply_id: int
    ) -> tuple[Message | None, int | None]:
        """A reply as stored (None: not in this conversation), and the id of the newest
        message of the branch on screen (a reply to continue must be it)."""
        newest, _whole = self.recent_messages(conversation_id, 0)
        row = self._store.connection().execute(
            "SELECT * FROM messages WHERE id = ? AND conversation_id = ?",
            (reply_id, conversation_id),
        )
        found = messages_from(row)
        return (found[0] if found else None), newest[-1].id if newest else None

    def recent_messages(
        self, conversation_id: int, chars: int, image_chars: int = 0
    ) -> tuple[list[Message], bool]:
        """The end of the branch on screen: its newest messages, walking back from the leaf
        until their text and files pass `chars` (the one that passes it included), in order;
        and whether that reached its first message. An image counts as `image_chars`, a text
        file as its length. Reads what a send needs of a conversation of any length."""
        # Each row's total: its own text and files and those of the messages after it.
        size = "length(m.content) + (SELECT coalesce(sum(CASE WHEN a.media_type LIKE 'image/%'"
        size += " THEN ?3 ELSE length(a.data) END), 0)"
        size += " FROM attachments a WHERE a.message_id = m.id)"
        walk = (
            "WITH RECURSIVE tail(id, parent, total) AS ("  # noqa: S608 (fixed text)
            f" SELECT m.id, m.parent_id, {size} FROM conversations c"
            " JOIN messages m ON m.id = c.leaf_id WHERE c.id = ?1"
            f" UNION ALL SELECT m.id, m.parent_id, tail.total + {size}"
            " FROM tail JOIN messages m ON m.id = tail.parent WHERE tail.total <= ?2)"
            " SELECT messages.* FROM messages JOIN tail ON messages.id = tail.id"
            " ORDER BY messages.id"
        )
        rows = self._store.connection().execute(walk, (conversation_id, chars, image_chars))
        messages = messages_from(rows)
        return messages, not messages or messages[0].parent_id is None

    def revision(self, conversation_id: int) -> int | None:
        """How often what the conversation's messages say has changed, but for messages
        nothing follows yet (None: no such conversation). Read before what it vouches for."""
        row = (
            self._store.connection()
            .execute("SELECT revision FROM conversations WHERE id = ?", (conversation_id,))
            .fetchone()
        )
        return None if row is None else int(row[0])

    def messages_since(self, conversation_id: int, anchor: int, most: int) -> list[Message] | None:
        """The branch on screen from the message `anchor` (included) to its newest, in order;
        None when `anchor` is not among its newest `most` messages (another branch, or far
        back)."""
        rows = self._store.connection().execute(
            "WITH RECURSIVE walk(id, parent, n) AS ("
            " SELECT m.id, m.parent_id, 1 FROM conversations c"
            " JOIN messages m ON m.id = c.leaf_id WHERE c.id = ?1"
            " UNION ALL SELECT m.id, m.parent_id, walk.n + 1 FROM walk"
            " JOIN messages m ON m.id = walk.parent WHERE walk.id != ?2 AND walk.n < ?3)"
            " SELECT messages.* FROM messages JOIN walk ON messages.id = walk.id"
            " ORDER BY messages.id",
            (conversation_id, anchor, most),
        )
        messages = messages_from(rows)
        return messages if messages and messages[0].id == anchor else None

    def branch_length(self, conversation_id: int) -> int:
        """How many messages the branch on screen holds (a walk of its ids alone)."""
        return self._walk_length(
            "SELECT leaf_id FROM conversations WHERE id = ? AND leaf_id IS NOT NULL",
            conversation_id,
        )

    def length_to(self, message_id: int) -> int:
        """How many messages a branch holds up to this one, this one included."""
        return self._walk_length("SELECT id FROM messages WHERE id = ?", message_id)

    def _walk_length(self, start: str, value: int) -> int:
        row = (
            self._store.connection()
            .execute(
                f"WITH RECURSIVE branch(id) AS ({start}"  # noqa: S608 (fixed text)
                " UNION ALL SELECT m.parent_id FROM messages m JOIN branch ON m.id = branch.id"
                " WHERE m.parent_id IS NOT NULL)"
                " SELECT count(*) FROM branch",
                (value,),
            )
            .fetchone()
        )
        return int(row[0])

    def attachments_of(self, message_ids: Sequence[int]) -> dict[int, list[Attachment]]:
        """The files attached to these messages (those that have some), by message."""
        rows = self._store.connection().execute(
            "SELECT message_id, name, media_type, data FROM attachments"
            " WHERE message_id IN (SELECT value FROM json_each(?))"
            " ORDER BY message_id, position",
            (json.dumps(list(message_ids)),),
        )
        found: dict[int, list[Attachment]] = {}
        for row in rows:
            found.setdefault(row[0], []).append(Attachment(row[1], row[2], bytes(row[3])))
        return found

    def newest_id(self, conversation_id: int) -> int:
        """The id of the conversation's newest message, of any branch (0: none yet)."""
        row = (
            self._store.connection()
            .execute("SELECT max(id) FROM messages WHERE conversation_id = ?", (conversation_id,))
            .fetchone()
        )
        return int(row[0]) if row is not None and row[0] is not None else 0

    def page(
        self, conversation_id: int, count: int, *, before: int | None = None, down_to: int = 0
    ) -> TranscriptPage:
        """Up to `count` messages of the branch on screen, in order, ending with its newest
        (or with the one before `before`), none older than the message `down_to`; with their
        alternatives and files, and whether earlier messages exist."""
        connection = self._store.connection()
        if before is None:
            row = connection.execute(
                "SELECT leaf_id FROM conversations WHERE id = ?", (conversation_id,)
            ).fetchone()
        else:
            row = connection.execute(
                "SELECT parent_id FROM messages WHERE id = ? AND conversation_id = ?",
                (before, conversation_id),
            ).fetchone()
        if row is None or row[0] is None:
            return TranscriptPage.empty()
        rows = connection.execute(
            "WITH RECURSIVE walk(id, parent, n) AS ("
            " SELECT id, parent_id, 1 FROM messages WHERE id = ?1"
            " UNION ALL SELECT m.id, m.parent_id, walk.n + 1 FROM walk"
            " JOIN messages m ON m.id = walk.parent WHERE walk.n < ?2 AND m.id >= ?3)"
            " SELECT messages.* FROM messages JOIN walk ON messages.id = walk.id"
            " ORDER BY messages.id",
            (row[0], count, down_to),
        )
        messages = messages_from(rows)
        ids = [m.id for m in messages]
        earlier = bool(messages) and messages[0].parent_id is not None
        return TranscriptPage(
            messages,
            self.alternatives_of(ids),
            self.attachment_labels_of(ids),
            earlier,
            tool_calls=self.tool_calls_of(ids),
        )

    def page_from(self, conversation_id: int, first: int, count: int) -> TranscriptPage:
        """Up to `count` messages of the branch on screen from the message `first` on (none
        when it is not on that branch), and whether older and newer ones exist. The branch
        is walked back from its leaf by id alone, as far as `first`."""
        rows = (
            self._store.connection()
            .execute(
                "WITH RECURSIVE walk(id, parent) AS ("
                " SELECT m.id, m.parent_id FROM conversations c"
                " JOIN messages m ON m.id = c.leaf_id WHERE c.id = ?1"
                " UNION ALL SELECT m.id, m.parent_id FROM walk"
                " JOIN messages m ON m.id = walk.parent WHERE m.id >= ?2)"
                " SELECT id FROM walk ORDER BY id LIMIT ?3 + 1",
                (conversation_id, first, count),
            )
            .fetchall()
        )
        ids = [row[0] for row in rows]
        if not ids or ids[0] != first:
            return TranscriptPage.empty()
        shown = ids[:count]
        messages = messages_from(
            self._store.connection().execute(
                "SELECT * FROM messages WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
                (json.dumps(shown),),
            )
        )
        return TranscriptPage(
            messages,
            self.alternatives_of(shown),
            self.attachment_labels_of(shown),
            earlier=messages[0].parent_id is not None,
            later=len(ids) > count,
            tool_calls=self.tool_calls_of(shown),
        )

    def tool_turns_of(self, message_ids: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
        """The tool rounds of each of these replies that made any, as stored (a list of
        rounds: what the model said, its calls, their results); one that does not read as
        JSON is left out."""
        rows = self._store.connection().execute(
            "SELECT id, tool_turns FROM messages WHERE id IN (SELECT value FROM json_each(?))"
            " AND tool_turns IS NOT NULL",
            (json.dumps(list(message_ids)),),
        )
        found: dict[int, list[dict[str, Any]]] = {}
        for message_id, text in rows:
            with contextlib.suppress(ValueError):
                turns = json.loads(text)
                if isinstance(turns, list) and turns:
                    found[message_id] = turns
        return found

    def tool_calls_of(self, message_ids: Sequence[int]) -> dict[int, list[ShownToolCall]]:
        """The tool calls each of these replies made, for those that made any: every call
        with the result that went back for it (a stored round that does not read as one
        is skipped)."""
        found: dict[int, list[ShownToolCall]] = {}
        for message_id, turns in self.tool_turns_of(message_ids).items():
            with contextlib.suppress(ValueError, TypeError, AttributeError, KeyError):
                found[message_id] = _shown_calls(turns)
        return {key: calls for key, calls in found.items() if calls}

    def alternatives_of(self, message_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
        """For each of these messages that has alternatives (an edit, a regeneration): its
        place among them, 1 first, and how many there are."""
        rows = self._store.connection().execute(
            "SELECT m.id,"
            " (SELECT count(*) FROM messages s WHERE s.conversation_id = m.conversation_id"
            "  AND s.parent_id IS m.parent_id AND s.id <= m.id),"
            " (SELECT count(*) FROM messages s WHERE s.conversation_id = m.conversation_id"
            "  AND s.parent_id IS m.parent_id)"
            " FROM messages m WHERE m.id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(message_ids)),),
        )
        return {row[0]: (row[1], row[2]) for row in rows if row[2] > 1}

    def attachment_labels_of(self, message_ids: Sequence[int]) -> dict[int, list[str]]:
        """What each of these messages has attached, as its chip says it (`name · size`),
        without reading the files."""
        rows = self._store.connection().execute(
            "SELECT message_id, name, length(data) FROM attachments"
            " WHERE message_id IN (SELECT value FROM json_each(?))"
            " ORDER BY message_id, position",
            (json.dumps(list(message_ids)),),
        )
        labels: dict[int, list[str]] = {}
        for message_id, name, size in rows:
            labels.setdefault(message_id, []).append(size_label(name, size))
        return labels

    def spent(self, conversation_id: int) -> float:
        """What the conversation's replies cost, every branch (each was paid for)."""
        row = (
            self._store.connection()
            .execute(
                "SELECT coalesce(sum(cost_usd), 0) FROM messages"
                " WHERE conversation_id = ? AND cost_usd IS NOT NULL",
                (conversation_id,),
            )
            .fetchone()
        )
        return float(row[0])


def _shown_calls(turns: Any) -> list[ShownToolCall]:
    shown: list[ShownToolCall] = []
    for turn in turns:
        results = {result["id"]: result for result in turn["results"]}
        for call in turn["calls"]:
            result = results.get(call["id"], {})
            shown.append(
                ShownToolCall(
                    str(call["name"]),
                    str(call.get("arguments") or "{}"),
                    str(result.get("content", "")),
                    bool(result.get("error", False)),
                )
            )
    return shown
