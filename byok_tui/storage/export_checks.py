"""Checking an export before anything of it is taken in. An export is untrusted input (a file
from anywhere): every field is checked for its type, length and range, text is made
terminal-safe with any known key redacted, a file attached is held to what attaching one
allows, and the first problem found refuses the whole file, naming the field.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

from byok_tui.core.attachments import (
    IMAGE_TYPES,
    MAX_FILES,
    MAX_IMAGE_BYTES,
    MAX_TEXT_BYTES,
    TEXT,
    Attachment,
    check_together,
    image_type,
)
from byok_tui.core.records import Budget
from byok_tui.core.redaction import redact_keys, redact_known_secrets
from byok_tui.core.sanitize import clean_line, strip_terminal_controls
from byok_tui.storage.bot_fields import BotInputError

EXPORT_FORMAT = "byok-tui-export"
EXPORT_VERSION = 1
MAX_TEXT = 10 * 1024 * 1024
MESSAGE_FIELDS = (
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
    "tool_turns",  # the tools a reply called and what went back (JSON; absent before tools)
)
MOST_TOOL_ROUNDS = 50
MOST_USD = 1_000_000.0  # a reply's cost above this is not a cost


class ExportFormatError(BotInputError):
    """A file that is not a byok-tui export this version can read."""


def _check_attachments(raw: Any) -> list[Attachment]:
    """A message's files from an export, held to what attaching a file allows."""
    if raw is None:
        return []
    require(isinstance(raw, list) and len(raw) <= MAX_FILES, "a message's attachments are invalid")
    checked = []
    for entry in raw:
        require(isinstance(entry, dict), "an attachment must be an object")
        name, kind, data = entry.get("name"), entry.get("media_type"), entry.get("data")
        require(isinstance(name, str) and 0 < len(name) <= 200, "an attachment name is invalid")
        require(kind in (TEXT, *IMAGE_TYPES), "an attachment type is not one byok-tui takes")
        require(
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
            require(len(content) <= MAX_TEXT_BYTES, "a text attachment is too large")
            content = redact_known_secrets(strip_terminal_controls(text)).encode("utf-8")
        else:
            require(image_type(content) == kind, "an image attachment is not what it says")
        checked.append(Attachment(clean_line(name), str(kind), content))
    check_together(checked)
    return checked


def require(condition: bool, problem: str) -> None:
    if not condition:
        raise ExportFormatError(f"the file is not a valid byok-tui export: {problem}")


def checked_uuid(value: Any) -> str:
    require(isinstance(value, str) and 0 < len(value) <= 64, "a uuid is missing or malformed")
    return str(value)


# The ranges a stored number can have: a time from 1970 to the year 3000; a token count no
# reply comes near. Outside them a value is refused, with its field named, before anything is
# written (SQLite's integers stop at 2**63; a float can be infinite or not a number).
LATEST_TIME = 32_503_680_000.0
MOST_TOKENS = 10**12


def checked_time(value: Any, what: str) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    require(ok, f"{what} must be a number")
    require(isinstance(value, int) or math.isfinite(value), f"{what} must be a finite number")
    require(0 <= value <= LATEST_TIME, f"{what} is out of range (1970 to the year 3000)")
    return float(value)


def _count(value: Any, what: str) -> int | None:
    if value is None:
        return None
    require(isinstance(value, int) and not isinstance(value, bool), f"{what} is invalid")
    require(0 <= value <= MOST_TOKENS, f"{what} is out of range (0 to {MOST_TOKENS:,})")
    return int(value)


def _cost(value: Any) -> float | None:
    """None stays None: an unknown price is never made $0."""
    if value is None:
        return None
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    require(ok and math.isfinite(value), "a message cost must be a finite number")
    require(0 <= value <= MOST_USD, f"a message cost is out of range (0 to {MOST_USD:,.0f})")
    return float(value)


def check_message(raw: Any) -> dict[str, Any]:
    require(isinstance(raw, dict), "a message must be an object")
    message = {name: raw.get(name) for name in MESSAGE_FIELDS}
    message["uuid"] = checked_uuid(message["uuid"])
    require(message["role"] in ("user", "assistant"), "a message role is not user/assistant")
    require(message["status"] in ("complete", "partial", "error"), "a message status is unknown")
    for name in ("content", "reasoning"):
        value = message[name] if message[name] is not None else ""
        require(isinstance(value, str) and len(value) <= MAX_TEXT, f"message {name} is invalid")
        # Stored as a message of this app's is: terminal-safe, with no known key in it.
        message[name] = redact_known_secrets(strip_terminal_controls(value))
    for name in ("provider", "model", "key_source", "error_kind", "error_message", "price"):
        value = message[name]
        require(
            value is None or (isinstance(value, str) and len(value) <= 10_000),
            f"message {name} is invalid",
        )
        message[name] = clean_line(value) if value else value
    for name in ("input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens"):
        message[name] = _count(message[name], f"message {name}")
    message["cost_usd"] = _cost(message["cost_usd"])
    require(message["fallback"] in (None, 0, 1, True, False), "message fallback is invalid")
    message["fallback"] = int(bool(message["fallback"]))
    message["created"] = checked_time(message["created"], "a message time")
    parent = raw.get("parent_uuid")
    message["parent_uuid"] = None if parent is None else checked_uuid(parent)
    message["follows_previous"] = "parent_uuid" not in raw  # an export made before branches
    message["attachments"] = _check_attachments(raw.get("attachments"))
    message["tool_turns"] = _check_tool_turns(message["tool_turns"])
    return message


def _check_tool_turns(raw: Any) -> str | None:
    """A reply's tool calls from an export: only the fields byok-tui writes, each text
    terminal-safe and with no known key, as the JSON it stores (None: none)."""
    if raw is None or raw == "":
        return None
    require(isinstance(raw, str) and len(raw) <= MAX_TEXT, "a reply's tool calls are invalid")
    import json

    try:
        rounds = json.loads(raw)
    except (ValueError, RecursionError):
        raise ExportFormatError("a reply's tool calls are not valid JSON") from None
    require(
        isinstance(rounds, list) and len(rounds) <= MOST_TOOL_ROUNDS,
        "a reply's tool calls are invalid",
    )

    def text(value: Any, *, line: bool = False) -> str:
        require(value is None or isinstance(value, str), "a tool call's text is invalid")
        kept = redact_known_secrets(strip_terminal_controls(value or ""))
        return clean_line(kept)[:200] if line else kept

    def items(value: Any) -> list[dict[str, Any]]:
        require(isinstance(value, list) and len(value) <= 100, "a round's calls are invalid")
        require(all(isinstance(item, dict) for item in value), "a tool call must be an object")
        return list(value)

    checked = []
    for entry in rounds:
        require(isinstance(entry, dict), "a round of tool calls must be an object")
        calls = [
            {
                "id": text(c.get("id"), line=True),
                "name": text(c.get("name"), line=True),
                "arguments": text(c.get("arguments")),
                "problem": text(c.get("problem")) or None,
            }
            for c in items(entry.get("calls", []))
        ]
        results = [
            {
                "id": text(r.get("id"), line=True),
                "name": text(r.get("name"), line=True),
                "content": text(r.get("content")),
                "error": bool(r.get("error")),
            }
            for r in items(entry.get("results", []))
        ]
        checked.append({"said": text(entry.get("said")), "calls": calls, "results": results})
    return json.dumps(checked, ensure_ascii=False) if checked else None


def check_branches(messages: list[dict[str, Any]], current: Any) -> str | None:
    """Each message follows one before it in the same conversation; the branch on screen
    ends at one of them. The uuid it ends at (None: the last message)."""
    seen: set[str] = set()
    for message in messages:
        parent = message["parent_uuid"]
        require(parent is None or parent in seen, "a message follows one not before it")
        seen.add(message["uuid"])
    if current is None:
        return None
    require(checked_uuid(current) in seen, "a conversation's current message is not one of its own")
    return str(current)


def _text(value: Any, what: str, most: int, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    require(isinstance(value, str) and len(value) <= 10_000, f"{what} is invalid")
    return clean_line(redact_keys(str(value)))[:most]


def check_request(raw: Any) -> dict[str, Any]:
    """One row of an imported request log, held to what byok-tui itself records."""
    require(isinstance(raw, dict), "a request must be an object")
    status, last4, duration = raw.get("status"), raw.get("key_last4"), raw.get("duration_ms")
    require(
        status is None or (isinstance(status, int) and 100 <= status <= 599),
        "a request status is invalid",
    )
    require(
        last4 is None or (isinstance(last4, str) and len(last4) == 4 and last4.isalnum()),
        "a request's key_last4 is invalid",
    )
    require(
        isinstance(duration, int) and not isinstance(duration, bool) and 0 <= duration <= 10**9,
        "a request duration is invalid",
    )
    checked: dict[str, Any] = {
        "uuid": checked_uuid(raw.get("uuid")),
        "started": checked_time(raw.get("started"), "a request time"),
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


def check_budget(raw: Any) -> Budget:
    require(isinstance(raw, dict), "a budget must be an object")
    scope, amount, per = raw.get("scope"), raw.get("amount_usd"), raw.get("per")
    require(isinstance(scope, str) and 0 < len(scope) <= 64, "a budget scope is invalid")
    require(per in ("day", "month"), "a budget period is not day/month")
    return Budget(clean_line(str(scope)), _cost(amount) or 0.0, "day" if per == "day" else "month")


def parse_export(raw: bytes) -> dict[str, Any]:
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
    require(isinstance(document.get("bots"), list), "bots must be a list")
    require(isinstance(document.get("conversations"), list), "conversations must be a list")
    require(isinstance(document.get("settings", {}), dict), "settings must be an object")
    require(isinstance(document.get("requests", []), list), "requests must be a list")
    require(isinstance(document.get("budgets", []), list), "budgets must be a list")
    return document
