"""Export All Data and import: every bot, conversation, setting, budget and request logged,
never a key.

The export is one versioned JSON document with every bot, conversation, message (with what
each reply cost), setting, budget, row of the request log and provider the user defined
(read back by custom_providers.import_with_definitions), and no key of any kind: no `k`,
no global or environment key, and any known key value that found its way into a message is
replaced (a request keeps a key's last four characters at most). Import merges by uuid (a
second import of the same file changes nothing), never reads or writes keys, and changes
nothing at all unless the whole file is valid (storage/export_checks.py checks every field).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from typing import Any

from byok_tui.core.attachments import Attachment
from byok_tui.core.redaction import redact_keys, remember_secret
from byok_tui.core.sanitize import clean_line, strip_terminal_controls
from byok_tui.storage.bot_fields import bot_fields, check_bot_fields
from byok_tui.storage.bot_rows import insert_bot
from byok_tui.storage.db import Progress
from byok_tui.storage.draft_rows import DRAFT_SETTING
from byok_tui.storage.export_checks import (
    EXPORT_FORMAT,
    EXPORT_VERSION,
    MESSAGE_FIELDS,
    check_branches,
    check_budget,
    check_message,
    check_request,
    checked_time,
    checked_uuid,
    parse_export,
    require,
)
from byok_tui.storage.ledger import insert_requests
from byok_tui.storage.store import Store


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return redact_keys(value)
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def _exported(row: Any, attachments: list[Attachment]) -> dict[str, Any]:
    """A message as exported: its fields (not its id here), and its files, base64."""
    message = {name: row[name] for name in row.keys() if name != "id"}  # noqa: SIM118
    if attachments:
        message["attachments"] = [
            {
                "name": a.name,
                "media_type": a.media_type,
                "data": base64.b64encode(a.data).decode("ascii"),
            }
            for a in attachments
        ]
    return message


def export_all(
    store: Store, known_keys: Iterable[str], providers: Mapping[str, Any] | None = None
) -> bytes:
    """Every bot, conversation, message and setting, and the definitions of the providers the
    user defined (`providers`: none holds a key), as JSON bytes without any key."""
    for key in known_keys:
        remember_secret(key)
    bots = store.bots()
    for bot in bots:
        store.bot_key(bot.id)  # registers the per-bot key, so a copy in a message is caught
    db = store.connection()
    conversations = []
    for bot in bots:
        for conversation in store.conversations(bot.id):
            # Every branch; each message names the one it follows, the conversation the
            # message its branch on screen ends at.
            rows = db.execute(
                f"SELECT m.id, {', '.join(f'm.{f}' for f in MESSAGE_FIELDS)},"  # noqa: S608
                " p.uuid AS parent_uuid FROM messages m LEFT JOIN messages p"
                " ON p.id = m.parent_id WHERE m.conversation_id = ? ORDER BY m.id",
                (conversation.id,),
            ).fetchall()
            attached = store.attachments_in(conversation.id)
            leaf = db.execute(
                "SELECT m.uuid FROM conversations c JOIN messages m ON m.id = c.leaf_id"
                " WHERE c.id = ?",
                (conversation.id,),
            ).fetchone()
            conversations.append(
                {
                    "uuid": conversation.uuid,
                    "bot_uuid": bot.uuid,
                    "title": conversation.title,
                    "created": conversation.created,
                    "updated": conversation.updated,
                    "current_uuid": leaf[0] if leaf else None,
                    "messages": [_exported(row, attached.get(row["id"], [])) for row in rows],
                }
            )
    document = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "providers": dict(providers or {}),
        "bots": [{"uuid": b.uuid, **bot_fields(b.config)} for b in bots],
        "conversations": conversations,
        # A run's draft is not carried: its files are paths on this machine.
        "settings": {
            name: value
            for name, value in store.settings().items()
            if not name.startswith(DRAFT_SETTING)
        },
        # What replies cost is in their messages; these hold no key (a key's last four
        # characters at most) and are merged on import.
        "budgets": [asdict(budget) for budget in store.ledger.budgets()],
        "requests": store.ledger.requests(),
    }
    return json.dumps(_scrub(document), ensure_ascii=False, indent=1).encode("utf-8")


@dataclass(frozen=True, slots=True)
class ImportSummary:
    bots_added: int
    conversations_added: int
    messages_added: int
    dropped_fields: tuple[str, ...]
    requests_added: int = 0


def import_all(store: Store, raw: bytes) -> ImportSummary:
    return import_document(store, parse_export(raw))


def import_document(
    store: Store, document: dict[str, Any], progress: Progress | None = None
) -> ImportSummary:
    """Merge an export (parsed) into the store, all or nothing, after checking every field:
    what is here already is kept. `progress` is told of each conversation written."""
    bots = []
    dropped: set[str] = set()
    for entry in document["bots"]:
        checked = check_bot_fields(
            {k: v for k, v in entry.items() if k != "uuid"} if isinstance(entry, dict) else entry
        )
        dropped.update(checked.dropped)
        bots.append((checked_uuid(entry.get("uuid")), checked.config))
    known_bots = {uuid for uuid, _ in bots}
    conversations = []
    for entry in document["conversations"]:
        require(isinstance(entry, dict), "a conversation must be an object")
        require(
            checked_uuid(entry.get("bot_uuid")) in known_bots, "a conversation names an unknown bot"
        )
        title = entry.get("title")
        require(isinstance(title, str) and len(title) <= 1000, "a conversation title is invalid")
        messages = entry.get("messages")
        require(isinstance(messages, list), "a conversation's messages must be a list")
        entries = [check_message(m) for m in messages]
        conversations.append(
            (
                checked_uuid(entry.get("uuid")),
                entry["bot_uuid"],
                title,
                checked_time(entry.get("created"), "a conversation time"),
                checked_time(entry.get("updated"), "a conversation time"),
                entries,
                check_branches(entries, entry.get("current_uuid")),
            )
        )
    requests = [check_request(row) for row in document.get("requests", [])]
    budgets = [check_budget(row) for row in document.get("budgets", [])]
    settings = document.get("settings", {})
    require(
        isinstance(settings, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in settings.items()),
        "settings must map names to text",
    )

    added = [0, 0, 0]
    with store.transaction() as db:  # all or nothing
        bot_ids: dict[str, int] = {}
        for bot_uuid, config in bots:
            row = db.execute("SELECT id FROM bots WHERE uuid = ?", (bot_uuid,)).fetchone()
            if row is not None:
                bot_ids[bot_uuid] = row[0]
                continue
            name = _free_name(db, config.name)  # k is never set from an import
            bot_ids[bot_uuid] = insert_bot(db, bot_uuid, replace(config, name=name))
            added[0] += 1
        for done, (conv_uuid, bot_uuid, title, created, updated, messages, current) in enumerate(
            conversations, 1
        ):
            if progress is not None:
                progress(done, len(conversations))
            row = db.execute("SELECT id FROM conversations WHERE uuid = ?", (conv_uuid,)).fetchone()
            new_conversation = row is None
            if row is None:
                cursor = db.execute(
                    "INSERT INTO conversations (uuid, bot_id, title, created, updated)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (
                        conv_uuid,
                        bot_ids[bot_uuid],
                        redact_keys(clean_line(title)),
                        created,
                        updated,
                    ),
                )
                conversation_id = int(cursor.lastrowid or 0)
                added[1] += 1
            else:
                conversation_id = row[0]
            ids: dict[str, int] = {}  # each message's id here, by uuid
            previous: int | None = None
            for message in messages:
                exists = db.execute(
                    "SELECT id FROM messages WHERE uuid = ?", (message["uuid"],)
                ).fetchone()
                if exists:
                    previous = ids[message["uuid"]] = exists[0]
                    continue
                parent = message["parent_uuid"]
                parent_id = previous if message["follows_previous"] else ids.get(parent or "")
                cursor = db.execute(
                    f"INSERT INTO messages (conversation_id, {', '.join(MESSAGE_FIELDS)},"  # noqa: S608
                    f" updated, parent_id) VALUES (?, {', '.join('?' * len(MESSAGE_FIELDS))},"
                    " ?, ?)",
                    (
                        conversation_id,
                        *(message[f] for f in MESSAGE_FIELDS),
                        message["created"],
                        parent_id,
                    ),
                )
                previous = ids[message["uuid"]] = int(cursor.lastrowid or 0)
                db.executemany(
                    "INSERT INTO attachments (message_id, position, name, media_type, data)"
                    " VALUES (?, ?, ?, ?, ?)",
                    [
                        (previous, place, a.name, a.media_type, a.data)
                        for place, a in enumerate(message["attachments"])
                    ],
                )
                added[2] += 1
            if new_conversation and ids:  # a conversation here already keeps its own branch
                db.execute(
                    "UPDATE conversations SET leaf_id = ? WHERE id = ?",
                    (ids[current] if current else previous, conversation_id),
                )
        for name, value in settings.items():
            if name.startswith(DRAFT_SETTING):
                continue  # never taken in: its files would name paths to attach here
            db.execute(
                "INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT(name) DO NOTHING",
                (clean_line(name), strip_terminal_controls(value)),
            )
        for budget in budgets:  # a budget set here already is kept as it is
            db.execute(
                "INSERT INTO budgets (scope, amount_usd, per) VALUES (?, ?, ?)"
                " ON CONFLICT(scope) DO NOTHING",
                (budget.scope, budget.amount_usd, budget.per),
            )
        # Exported newest first: added oldest first, so that the log reads as it did.
        requests_added = insert_requests(db, requests[::-1])
    return ImportSummary(
        added[0], added[1], added[2], tuple(sorted(dropped)), requests_added=requests_added
    )


def free_bot_name(store: Store, name: str) -> str:
    """`name`, or `name (2)`, `name (3)`… whichever no bot has yet."""
    return _free_name(store.connection(), name)


def _free_name(db: Any, name: str) -> str:
    candidate, number = name, 2
    while db.execute("SELECT 1 FROM bots WHERE name = ?", (candidate,)).fetchone():
        candidate = f"{name} ({number})"
        number += 1
    return candidate
