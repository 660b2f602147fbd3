"""Export All Data and import: every bot, conversation, setting, budget and request logged,
never a key.

The export is one versioned JSON document with every bot, conversation, message (with what
each reply cost), setting, budget, row of the request log and provider the user defined
(read back by custom_providers.import_with_definitions), and no key of any kind: no `k`,
no global or environment key, and any known key value that found its way into a message is
replaced (a request keeps a key's last four characters at most). Import merges by uuid (a
second import of the same file changes nothing), never reads or writes keys, and changes
nothing at all unless the whole file is valid.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from typing import Any

from byok_tui.attachments import (
    IMAGE_TYPES,
    MAX_FILES,
    MAX_IMAGE_BYTES,
    MAX_TEXT_BYTES,
    TEXT,
    Attachment,
    check_together,
    image_type,
)
from byok_tui.records import Budget
from byok_tui.redaction import redact_keys, redact_known_secrets, remember_secret
from byok_tui.sanitize import clean_line, strip_terminal_controls
from byok_tui.storage.bot_fields import BotInputError, bot_fields, check_bot_fields
from byok_tui.storage.bot_rows import insert_bot
from byok_tui.storage.db import Progress
from byok_tui.storage.ledger import insert_requests
from byok_tui.storage.store import DRAFT_SETTING, Store

EXPORT_FORMAT = "byok-tui-export"
EXPORT_VERSION = 1
MAX_TEXT = 10 * 1024 * 1024
_MESSAGE_FIELDS = (
    "uuid",
    "role",
    "content",
    "reasoning",
    "provider",
    "model",
    "key_source",
    "status",
    "error_kind",
    "error_message",
    "input_tokens",
    "output_tokens",
    "created",
    # What a reply cost (absent from exports made before prices were recorded).
    "cached_input_tokens",
    "reasoning_tokens",
    "cost_usd",
    "price",
    "fallback",  # answered by one of the bot's fallbacks (absent from older exports: no)
)
MOST_USD = 1_000_000.0  # a reply's cost above this is not a cost


class ExportFormatError(BotInputError):
    """A file that is not a byok-tui export this version can read."""


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


def _check_attachments(raw: Any) -> list[Attachment]:
    """A message's files from an export, held to what attaching a file allows."""
    if raw is None:
        return []
    _require(isinstance(raw, list) and len(raw) <= MAX_FILES, "a message's attachments are invalid")
    checked = []
    for entry in raw:
        _require(isinstance(entry, dict), "an attachment must be an object")
        name, kind, data = entry.get("name"), entry.get("media_type"), entry.get("data")
        _require(isinstance(name, str) and 0 < len(name) <= 200, "an attachment name is invalid")
        _require(kind in (TEXT, *IMAGE_TYPES), "an attachment type is not one byok-tui takes")
        _require(
            isinstance(data, str) and len(data) <= (MAX_IMAGE_BYTES * 4) // 3 + 4,
            "an attachment is invalid or too large",
        )
        try:
            content = base64.b64decode(data, validate=True)
        except ValueError:
            raise ExportFormatError(
                "the file is not a valid byok-tui export: an attachment is not base64"
            ) from None
        if kind == TEXT:
            try:
                text = content.decode("utf-8")
            except UnicodeDecodeError:
                raise ExportFormatError(
                    "the file is not a valid byok-tui export: a text attachment is not UTF-8"
                ) from None
            _require(len(content) <= MAX_TEXT_BYTES, "a text attachment is too large")
            content = redact_known_secrets(strip_terminal_controls(text)).encode("utf-8")
        else:
            _require(image_type(content) == kind, "an image attachment is not what it says")
        checked.append(Attachment(clean_line(name), str(kind), content))
    check_together(checked)
    return checked


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
                f"SELECT m.id, {', '.join(f'm.{f}' for f in _MESSAGE_FIELDS)},"  # noqa: S608
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


def _require(condition: bool, problem: str) -> None:
    if not condition:
        raise ExportFormatError(f"the file is not a valid byok-tui export: {problem}")


def _uuid(value: Any) -> str:
    _require(isinstance(value, str) and 0 < len(value) <= 64, "a uuid is missing or malformed")
    return str(value)


# The ranges a stored number can have: a time from 1970 to the year 3000; a token count no
# reply comes near. Outside them a value is refused, with its field named, before anything is
# written (SQLite's integers stop at 2**63; a float can be infinite or not a number).
LATEST_TIME = 32_503_680_000.0
MOST_TOKENS = 10**12


def _number(value: Any, what: str) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    _require(ok, f"{what} must be a number")
    _require(isinstance(value, int) or math.isfinite(value), f"{what} must be a finite number")
    _require(0 <= value <= LATEST_TIME, f"{what} is out of range (1970 to the year 3000)")
    return float(value)


def _count(value: Any, what: str) -> int | None:
    if value is None:
        return None
    _require(isinstance(value, int) and not isinstance(value, bool), f"{what} is invalid")
    _require(0 <= value <= MOST_TOKENS, f"{what} is out of range (0 to {MOST_TOKENS:,})")
    return int(value)


def _cost(value: Any) -> float | None:
    """None stays None: an unknown price is never made $0."""
    if value is None:
        return None
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    _require(ok and math.isfinite(value), "a message cost must be a finite number")
    _require(0 <= value <= MOST_USD, f"a message cost is out of range (0 to {MOST_USD:,.0f})")
    return float(value)


def _check_message(raw: Any) -> dict[str, Any]:
    _require(isinstance(raw, dict), "a message must be an object")
    message = {name: raw.get(name) for name in _MESSAGE_FIELDS}
    message["uuid"] = _uuid(message["uuid"])
    _require(message["role"] in ("user", "assistant"), "a message role is not user/assistant")
    _require(message["status"] in ("complete", "partial", "error"), "a message status is unknown")
    for name in ("content", "reasoning"):
        value = message[name] if message[name] is not None else ""
        _require(isinstance(value, str) and len(value) <= MAX_TEXT, f"message {name} is invalid")
        # Stored as a message of this app's is: terminal-safe, with no known key in it.
        message[name] = redact_known_secrets(strip_terminal_controls(value))
    for name in ("provider", "model", "key_source", "error_kind", "error_message", "price"):
        value = message[name]
        _require(
            value is None or (isinstance(value, str) and len(value) <= 10_000),
            f"message {name} is invalid",
        )
        message[name] = clean_line(value) if value else value
    for name in ("input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens"):
        message[name] = _count(message[name], f"message {name}")
    message["cost_usd"] = _cost(message["cost_usd"])
    _require(message["fallback"] in (None, 0, 1, True, False), "message fallback is invalid")
    message["fallback"] = int(bool(message["fallback"]))
    message["created"] = _number(message["created"], "a message time")
    parent = raw.get("parent_uuid")
    message["parent_uuid"] = None if parent is None else _uuid(parent)
    message["follows_previous"] = "parent_uuid" not in raw  # an export made before branches
    message["attachments"] = _check_attachments(raw.get("attachments"))
    return message


def _check_branches(messages: list[dict[str, Any]], current: Any) -> str | None:
    """Each message follows one before it in the same conversation; the branch on screen
    ends at one of them. The uuid it ends at (None: the last message)."""
    seen: set[str] = set()
    for message in messages:
        parent = message["parent_uuid"]
        _require(parent is None or parent in seen, "a message follows one not before it")
        seen.add(message["uuid"])
    if current is None:
        return None
    _require(_uuid(current) in seen, "a conversation's current message is not one of its own")
    return str(current)


def _text(value: Any, what: str, most: int, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    _require(isinstance(value, str) and len(value) <= 10_000, f"{what} is invalid")
    return clean_line(redact_keys(str(value)))[:most]


def _check_request(raw: Any) -> dict[str, Any]:
    """One row of an imported request log, held to what byok-tui itself records."""
    _require(isinstance(raw, dict), "a request must be an object")
    status, last4, duration = raw.get("status"), raw.get("key_last4"), raw.get("duration_ms")
    _require(
        status is None or (isinstance(status, int) and 100 <= status <= 599),
        "a request status is invalid",
    )
    _require(
        last4 is None or (isinstance(last4, str) and len(last4) == 4 and last4.isalnum()),
        "a request's key_last4 is invalid",
    )
    _require(
        isinstance(duration, int) and not isinstance(duration, bool) and 0 <= duration <= 10**9,
        "a request duration is invalid",
    )
    checked: dict[str, Any] = {
        "uuid": _uuid(raw.get("uuid")),
        "started": _number(raw.get("started"), "a request time"),
        "status": status,
        "key_last4": last4,
        "duration_ms": duration,
        "input_tokens": _count(raw.get("input_tokens"), "request input_tokens"),
        "output_tokens": _count(raw.get("output_tokens"), "request output_tokens"),
        "cost_usd": _cost(raw.get("cost_usd")),
        "model": _text(raw.get("model"), "a request model", 200, optional=True),
    }
    for name, most in _REQUEST_TEXT.items():
        checked[name] = _text(raw.get(name), f"a request {name}", most)
    return checked


_REQUEST_TEXT = {
    "provider": 64,
    "purpose": 32,
    "method": 16,
    "host": 255,
    "path": 512,
    "key_source": 32,
    "outcome": 32,
}


def _check_budget(raw: Any) -> Budget:
    _require(isinstance(raw, dict), "a budget must be an object")
    scope, amount, per = raw.get("scope"), raw.get("amount_usd"), raw.get("per")
    _require(isinstance(scope, str) and 0 < len(scope) <= 64, "a budget scope is invalid")
    _require(per in ("day", "month"), "a budget period is not day/month")
    return Budget(clean_line(str(scope)), _cost(amount) or 0.0, "day" if per == "day" else "month")


def _parse(raw: bytes) -> dict[str, Any]:
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ExportFormatError("the file is not a byok-tui export (it is not JSON)") from None
    if not isinstance(document, dict) or document.get("format") != EXPORT_FORMAT:
        raise ExportFormatError("the file is not a byok-tui export")
    version = document.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ExportFormatError("the file is not a valid byok-tui export: no version")
    if version > EXPORT_VERSION:
        raise ExportFormatError(
            f"the export is format version {version}, newer than this byok-tui reads "
            f"({EXPORT_VERSION}); upgrade byok-tui"
        )
    _require(isinstance(document.get("bots"), list), "bots must be a list")
    _require(isinstance(document.get("conversations"), list), "conversations must be a list")
    _require(isinstance(document.get("settings", {}), dict), "settings must be an object")
    _require(isinstance(document.get("requests", []), list), "requests must be a list")
    _require(isinstance(document.get("budgets", []), list), "budgets must be a list")
    return document


def import_all(store: Store, raw: bytes) -> ImportSummary:
    return import_document(store, _parse(raw))


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
        bots.append((_uuid(entry.get("uuid")), checked.config))
    known_bots = {uuid for uuid, _ in bots}
    conversations = []
    for entry in document["conversations"]:
        _require(isinstance(entry, dict), "a conversation must be an object")
        _require(_uuid(entry.get("bot_uuid")) in known_bots, "a conversation names an unknown bot")
        title = entry.get("title")
        _require(isinstance(title, str) and len(title) <= 1000, "a conversation title is invalid")
        messages = entry.get("messages")
        _require(isinstance(messages, list), "a conversation's messages must be a list")
        entries = [_check_message(m) for m in messages]
        conversations.append(
            (
                _uuid(entry.get("uuid")),
                entry["bot_uuid"],
                title,
                _number(entry.get("created"), "a conversation time"),
                _number(entry.get("updated"), "a conversation time"),
                entries,
                _check_branches(entries, entry.get("current_uuid")),
            )
        )
    requests = [_check_request(row) for row in document.get("requests", [])]
    budgets = [_check_budget(row) for row in document.get("budgets", [])]
    settings = document.get("settings", {})
    _require(
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
                    f"INSERT INTO messages (conversation_id, {', '.join(_MESSAGE_FIELDS)},"  # noqa: S608
                    f" updated, parent_id) VALUES (?, {', '.join('?' * len(_MESSAGE_FIELDS))},"
                    " ?, ?)",
                    (
                        conversation_id,
                        *(message[f] for f in _MESSAGE_FIELDS),
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
