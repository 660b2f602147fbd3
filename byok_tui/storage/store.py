"""Bots, conversations and messages: the repository every front end uses.

Bots and their keys are storage/bot_rows.py's part, the connection per thread
storage/database.py's. Every text stored here from outside or from the user is made
terminal-safe, and any key the user has in it redacted, before it is written.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from byok_tui.core.attachments import Attachment, size_label
from byok_tui.core.records import Conversation, Message, MessageStatus
from byok_tui.core.redaction import redact, redact_keys, redact_known_secrets
from byok_tui.core.sanitize import clean_line, strip_terminal_controls
from byok_tui.storage.bot_rows import BotRows, NotFoundError
from byok_tui.storage.branch import BranchReader, messages_from
from byok_tui.storage.db import Progress
from byok_tui.storage.draft_rows import DraftRows
from byok_tui.storage.key_health import KeyHealthBook
from byok_tui.storage.ledger import Ledger
from byok_tui.storage.search import MessageSearch

if TYPE_CHECKING:
    from byok_tui.core.records import Cost
    from byok_tui.providers.types import Usage

# The bot and conversation last opened, which the next start opens again.
LAST_OPENED_SETTING = "last-opened"
# What a run's composer held, not sent (the run's name follows: runs.py); a later start gives
# back those of runs that have ended.


def _line(value: str | None) -> str | None:
    return clean_line(value) if value else value


def _conversation(row: sqlite3.Row) -> Conversation:
    return Conversation(**{name: row[name] for name in Conversation.__slots__})


def _message(row: sqlite3.Row) -> Message:
    fields = {name: row[name] for name in Message.__slots__}
    fields["fallback"] = bool(fields["fallback"])
    return Message(**fields)


class Store(BotRows, DraftRows):
    """Bots (BotRows), conversations and messages, and the books kept beside them."""

    def __init__(self, path: Path, progress: Progress | None = None) -> None:
        """`progress`: told how far a long upgrade of the file is (done, total)."""
        super().__init__(path, progress)
        self.ledger = Ledger(self)  # spend, budgets, rate limits and the request log
        self.key_health = KeyHealthBook(self)  # what each key's answers said of it
        self.search = MessageSearch(self)  # full-text search over messages and titles
        self.branch = BranchReader(self)  # the branch on screen, a part at a time
        self.connection()  # open (and migrate) now, so a bad file is reported at once

    # Conversations -------------------------------------------------------------------------

    def conversations(
        self, bot_id: int, *, limit: int = -1, after: Conversation | None = None
    ) -> list[Conversation]:
        """The bot's conversations, newest first: at most `limit` (-1: all), those that come
        `after` one (older than it) when given."""
        # Row values compare in order: (updated, id) before the last one listed, exactly.
        older = after is not None
        rows = self.connection().execute(
            "SELECT * FROM conversations WHERE bot_id = ?"
            " AND (NOT ? OR (updated, id) < (?, ?)) ORDER BY updated DESC, id DESC LIMIT ?",
            (bot_id, older, after and after.updated, after and after.id, limit),
        )
        return [_conversation(row) for row in rows]

    def conversation_count(self, bot_id: int, *, newer_than: Conversation | None = None) -> int:
        """How many conversations the bot has (those listed before `newer_than`, if given)."""
        newer = newer_than is not None
        row = self._one(
            "SELECT COUNT(*) FROM conversations WHERE bot_id = ?"
            " AND (NOT ? OR (updated, id) > (?, ?))",
            bot_id,
            newer,
            newer_than and newer_than.updated,
            newer_than and newer_than.id,
        )
        return int(row[0]) if row is not None else 0

    def has_conversations(self, bot_id: int) -> bool:
        """Whether the bot has any conversation (without reading them: a bot may have
        tens of thousands)."""
        row = self._one("SELECT 1 FROM conversations WHERE bot_id = ? LIMIT 1", bot_id)
        return row is not None

    def last_answering_key(self, conversation_id: int) -> str | None:
        """The key source of the conversation's newest complete reply (failover stays on
        the key that last answered)."""
        row = self._one(
            "SELECT key_source FROM messages WHERE conversation_id = ? AND role = 'assistant'"
            " AND status = 'complete' AND key_source IS NOT NULL ORDER BY id DESC LIMIT 1",
            conversation_id,
        )
        return str(row[0]) if row is not None else None

    def has_answers(self, bot_id: int) -> bool:
        """Whether any request was ever made for the bot: a reply with a key source (a send
        refused before any request, no key or a budget, has none)."""
        row = self._one(
            "SELECT 1 FROM messages m JOIN conversations c ON c.id = m.conversation_id"
            " WHERE c.bot_id = ? AND m.role = 'assistant' AND m.key_source IS NOT NULL"
            " LIMIT 1",
            bot_id,
        )
        return row is not None

    def conversation(self, conversation_id: int) -> Conversation:
        row = self._one("SELECT * FROM conversations WHERE id = ?", conversation_id)
        if row is None:
            raise NotFoundError(
                f"no conversation {conversation_id}",
                remedy="`byok-tui conversations` lists them with their ids.",
            )
        return _conversation(row)

    def create_conversation(self, bot_id: int, title: str) -> Conversation:
        now = time.time()
        with self.transaction() as db:
            cursor = db.execute(
                "INSERT INTO conversations (uuid, bot_id, title, created, updated)"
                " VALUES (?, ?, ?, ?, ?)",
                (str(uuid.uuid4()), bot_id, redact_keys(clean_line(title)), now, now),
            )
        return self.conversation(int(cursor.lastrowid or 0))

    def rename_conversation(self, conversation_id: int, title: str) -> None:
        with self.transaction() as db:
            db.execute(
                "UPDATE conversations SET title = ?, updated = ? WHERE id = ?",
                (redact_keys(clean_line(title)), time.time(), conversation_id),
            )

    def use_bot_model(self, conversation_id: int) -> None:
        """Its next messages go to its bot's provider and model again (see switch_to)."""
        with self.transaction() as db:
            db.execute(
                "UPDATE conversations SET continues_on = NULL WHERE id = ?", (conversation_id,)
            )

    def delete_conversation(self, conversation_id: int) -> None:
        with self.transaction() as db:
            db.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))

    # Messages ------------------------------------------------------------------------------

    def messages(self, conversation_id: int) -> list[Message]:
        """The branch on screen: from the first message to the conversation's leaf (a
        message always has a greater id than the one it follows)."""
        rows = self.connection().execute(
            "WITH RECURSIVE branch(id) AS ("
            " SELECT leaf_id FROM conversations WHERE id = ? AND leaf_id IS NOT NULL"
            " UNION ALL SELECT m.parent_id FROM messages m JOIN branch ON m.id = branch.id"
            " WHERE m.parent_id IS NOT NULL)"
            " SELECT messages.* FROM messages JOIN branch ON messages.id = branch.id"
            " ORDER BY messages.id",
            (conversation_id,),
        )
        return messages_from(rows)

    def all_messages(self, conversation_id: int) -> list[Message]:
        """Every message of every branch, in the order they were stored."""
        rows = self.connection().execute(
            "SELECT * FROM messages WHERE conversation_id = ? ORDER BY id", (conversation_id,)
        )
        return messages_from(rows)

    def branch_from(self, conversation_id: int, parent_id: int | None) -> None:
        """The next message of the conversation follows `parent_id` (None: it is a new first
        message): what came after stays, as an alternative."""
        with self.transaction() as db:
            db.execute(
                "UPDATE conversations SET leaf_id = ? WHERE id = ?", (parent_id, conversation_id)
            )

    def sibling(self, message_id: int, step: int) -> int | None:
        """The alternative `step` places after (negative: before) this message; None past
        the first or the last."""
        row = self._one("SELECT conversation_id, parent_id FROM messages WHERE id = ?", message_id)
        if row is None:
            raise NotFoundError(f"no message {message_id}")
        ids = [
            r[0]
            for r in self.connection().execute(
                "SELECT id FROM messages WHERE conversation_id = ? AND parent_id IS ? ORDER BY id",
                (row[0], row[1]),
            )
        ]
        place = ids.index(message_id) + step
        return ids[place] if 0 <= place < len(ids) else None

    def show_branch_of(self, message_id: int) -> None:
        """The branch on screen of the message's conversation holds it: unchanged when it
        does, else the branch through it (switch_to). A message gone: nothing changes."""
        with self.transaction() as db:
            on_branch = db.execute(
                "WITH RECURSIVE above(id, parent_id) AS ("
                " SELECT m.id, m.parent_id FROM messages m JOIN conversations c"
                " ON c.leaf_id = m.id WHERE c.id = (SELECT conversation_id FROM messages"
                " WHERE id = ?1) UNION ALL SELECT m.id, m.parent_id FROM messages m"
                " JOIN above ON m.id = above.parent_id) SELECT 1 FROM above WHERE id = ?1",
                (message_id,),
            ).fetchone()
        if on_branch is None:
            self.switch_to(message_id)

    def switch_to(self, message_id: int, *, keep_its_model: bool = False) -> None:
        """Show the branch through `message_id`, down to the newest message that follows it.
        `keep_its_model` (a compare's reply kept): the conversation's next messages go to
        that reply's provider and model, not the bot's, until the bot's own change."""
        with self.transaction() as db:
            db.execute(
                "WITH RECURSIVE below(id) AS (SELECT ?1 UNION ALL"
                " SELECT m.id FROM messages m JOIN below ON m.parent_id = below.id)"
                " UPDATE conversations SET leaf_id = (SELECT max(id) FROM below)"
                " WHERE id = (SELECT conversation_id FROM messages WHERE id = ?1)",
                (message_id,),
            )
            if keep_its_model:
                db.execute(
                    "UPDATE conversations SET continues_on = (SELECT provider || ':' || model"
                    " FROM messages WHERE id = ?1 AND provider IS NOT NULL)"
                    " WHERE id = (SELECT conversation_id FROM messages WHERE id = ?1)",
                    (message_id,),
                )

    def last_cut_reply(self, bot_id: int) -> tuple[Conversation, Message] | None:
        """The bot's newest reply cut short (stopped, cut, or at the length limit) that ends
        the branch on screen of its conversation: the one `ask --continue` continues."""
        row = self._one(
            "SELECT m.id FROM messages m JOIN conversations c ON c.leaf_id = m.id"
            " WHERE c.bot_id = ? AND m.role = 'assistant' AND m.status = 'partial'"
            " AND m.content != '' ORDER BY m.id DESC LIMIT 1",
            bot_id,
        )
        if row is None:
            return None
        reply = self.message(row["id"])
        return self.conversation(reply.conversation_id), reply

    def message(self, message_id: int) -> Message:
        row = self._one("SELECT * FROM messages WHERE id = ?", message_id)
        if row is None:
            raise NotFoundError(f"no message {message_id}")
        return _message(row)

    def add_message(
        self,
        conversation_id: int,
        role: Literal["user", "assistant"],
        content: str,
        *,
        status: MessageStatus = "complete",
        provider: str | None = None,
        model: str | None = None,
        key_source: str | None = None,
        fallback: bool = False,
        attachments: Sequence[Attachment] = (),
    ) -> Message:
        """`fallback`: a reply asked of one of the bot's fallbacks. `attachments`: the files
        sent with it (a key of the user's in a text file is redacted, as in a message)."""
        now = time.time()
        with self.transaction() as db:
            cursor = db.execute(
                "INSERT INTO messages (uuid, conversation_id, role, content, provider, model,"
                " key_source, status, created, updated, fallback, parent_id)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                " (SELECT leaf_id FROM conversations WHERE id = ?))",
                (
                    str(uuid.uuid4()),
                    conversation_id,
                    role,
                    redact_known_secrets(strip_terminal_controls(content)),  # no key kept
                    _line(provider),
                    _line(model),
                    _line(key_source),
                    status,
                    now,
                    now,
                    int(fallback),
                    conversation_id,  # it follows the branch on screen
                ),
            )
            db.execute(
                "UPDATE conversations SET updated = ?, leaf_id = ? WHERE id = ?",
                (now, cursor.lastrowid, conversation_id),
            )
            db.executemany(
                "INSERT INTO attachments (message_id, position, name, media_type, data)"
                " VALUES (?, ?, ?, ?, ?)",
                [
                    (cursor.lastrowid, place, clean_line(a.name), a.media_type, _kept(a))
                    for place, a in enumerate(attachments)
                ],
            )
        return self.message(int(cursor.lastrowid or 0))

    def attachments_in(self, conversation_id: int) -> dict[int, list[Attachment]]:
        """The files attached in a conversation, by message (every branch): one query led by
        the attachments table, so a conversation of 100,000 messages costs no more than its
        files (sending reads this every time)."""
        rows = self.connection().execute(
            "SELECT a.message_id, a.name, a.media_type, a.data FROM attachments a"
            " CROSS JOIN messages m ON m.id = a.message_id WHERE m.conversation_id = ?"
            " ORDER BY a.message_id, a.position",
            (conversation_id,),
        )
        found: dict[int, list[Attachment]] = {}
        for row in rows:
            found.setdefault(row[0], []).append(Attachment(row[1], row[2], bytes(row[3])))
        return found

    def attachment_labels(self, conversation_id: int) -> dict[int, list[str]]:
        """What each message of the conversation has attached, as its chip says it (`name ·
        size`), without reading the files."""
        rows = self.connection().execute(
            "SELECT a.message_id, a.name, length(a.data) FROM attachments a"
            " CROSS JOIN messages m ON m.id = a.message_id WHERE m.conversation_id = ?"
            " ORDER BY a.message_id, a.position",
            (conversation_id,),
        )
        labels: dict[int, list[str]] = {}
        for message_id, name, size in rows:
            labels.setdefault(message_id, []).append(size_label(name, size))
        return labels

    def save_reply(
        self,
        message_id: int,
        *,
        content: str,
        reasoning: str,
        status: MessageStatus,
        error_kind: str | None = None,
        error_message: str | None = None,
        usage: Usage | None = None,
        cost: Cost | None = None,
        tool_turns: list[dict[str, object]] | None = None,
    ) -> None:
        """`cost` only once, when the reply has ended: it is never worked out again.
        `tool_turns`: the tools the reply called, round by round, and what went back (outside
        text, terminal-safe and with known keys redacted as it is stored)."""
        with self.transaction() as db:
            db.execute(
                "UPDATE messages SET content = ?, reasoning = ?, status = ?, error_kind = ?,"
                " error_message = ?, input_tokens = ?, output_tokens = ?,"
                " cached_input_tokens = ?, reasoning_tokens = ?, tool_turns = ?, updated = ?"
                " WHERE id = ?",
                (
                    redact_known_secrets(strip_terminal_controls(content)),
                    redact_known_secrets(strip_terminal_controls(reasoning)),
                    status,
                    error_kind,
                    redact(clean_line(error_message)) if error_message else None,
                    usage.input_tokens if usage else None,
                    usage.output_tokens if usage else None,
                    usage.cached_input_tokens if usage else None,
                    usage.reasoning_tokens if usage else None,
                    _tool_turns_text(tool_turns),
                    time.time(),
                    message_id,
                ),
            )
            if cost is not None:
                self._save_cost(db, message_id, cost)

    def tool_turns_of(self, message_id: int) -> list[dict[str, object]]:
        """What a reply's tool calls were, round by round (none for most replies)."""
        import json

        row = self._one("SELECT tool_turns FROM messages WHERE id = ?", message_id)
        if row is None or not row["tool_turns"]:
            return []
        found = json.loads(row["tool_turns"])
        return found if isinstance(found, list) else []

    def tool_turns_in(self, conversation_id: int) -> dict[int, list[dict[str, object]]]:
        """The tool calls of every reply of the conversation that made any, by message id."""
        import json

        rows = self.connection().execute(
            "SELECT id, tool_turns FROM messages WHERE conversation_id = ?"
            " AND tool_turns IS NOT NULL",
            (conversation_id,),
        )
        found = {row["id"]: json.loads(row["tool_turns"]) for row in rows}
        return {key: value for key, value in found.items() if isinstance(value, list)}

    def set_reply_key_source(self, message_id: int, key_source: str) -> None:
        """The reply is answered with another key than the one it was started with."""
        with self.transaction() as db:
            db.execute(
                "UPDATE messages SET key_source = ? WHERE id = ?", (_line(key_source), message_id)
            )

    def save_cost(self, message_id: int, cost: Cost) -> None:
        """A reply's cost once it has ended (and, for one that calls tools, its rounds' so far,
        which a budget then counts; the final cost replaces it)."""
        with self.transaction() as db:
            self._save_cost(db, message_id, cost)

    @staticmethod
    def _save_cost(db: sqlite3.Connection, message_id: int, cost: Cost) -> None:
        db.execute(
            "UPDATE messages SET cost_usd = ?, price = ? WHERE id = ?",
            (cost.usd, clean_line(cost.price), message_id),
        )

    # Settings ------------------------------------------------------------------------------

    def last_opened(self) -> tuple[int | None, int | None]:
        """(bot id, conversation id) last opened; None where there is none."""
        saved = self.settings().get(LAST_OPENED_SETTING, "").partition(":")
        bot, conversation = saved[0], saved[2]
        return (
            int(bot) if bot.isdigit() else None,
            int(conversation) if conversation.isdigit() else None,
        )

    def set_last_opened(self, bot_id: int, conversation_id: int | None) -> None:
        self.set_setting(LAST_OPENED_SETTING, f"{bot_id}:{conversation_id or ''}")


def _tool_turns_text(tool_turns: list[dict[str, object]] | None) -> str | None:
    if not tool_turns:
        return None
    import json

    text = json.dumps(tool_turns, ensure_ascii=False)
    return redact_known_secrets(strip_terminal_controls(text))


def _kept(attachment: Attachment) -> bytes:
    """What is stored of a file: a text file with any key of the user's redacted."""
    if attachment.is_image:
        return attachment.data
    return redact_known_secrets(attachment.text).encode("utf-8")
