"""Conversations from ChatGPT's and Claude's data exports (`conversations.json`, or the zip
it comes in), turned into byok-tui's own export shape and merged like one.

The file is untrusted input, checked as strictly as a share link: sizes are bounded before
anything is read whole, every field's type is checked, text is made terminal-safe and keys in
it are redacted (by the import it is handed to), nothing in it is run or fetched. What does
not fit (a malformed conversation, a tool call, an image) is skipped and counted, with the
reason. Each conversation and message gets a uuid made from its id in the file, so importing
the same file twice adds nothing the second time.

ChatGPT keeps each conversation as a tree (`mapping`: node id → message, parent, children)
with `current_node` at the end of the branch shown: every branch is imported, the others as
alternatives. Claude's `chat_messages` is a list; a message naming its parent
(`parent_message_uuid`) follows it, else the one before it.
"""

from __future__ import annotations

import io
import json
import uuid
import zipfile
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from byok_tui.core.errors import ByokError
from byok_tui.core.paths import read_bounded
from byok_tui.core.records import BotConfig
from byok_tui.core.redaction import redact_keys
from byok_tui.core.registry import history_provider
from byok_tui.core.sanitize import clean_line
from byok_tui.storage.bot_fields import bot_fields
from byok_tui.storage.db import Progress
from byok_tui.storage.export_checks import EXPORT_FORMAT, EXPORT_VERSION, LATEST_TIME, MAX_TEXT
from byok_tui.storage.store import Store
from byok_tui.storage.transfer import import_document

Source = Literal["chatgpt", "claude"]
# The service's name, which the bot its conversations come into is called (on the provider
# the registry says the service is: its `history_from`).
NAMES: dict[Source, str] = {"chatgpt": "ChatGPT", "claude": "Claude"}
MAX_FILE_BYTES = 512 * 1024 * 1024
MEMBER = "conversations.json"  # inside the zip each service sends
# Made up once for byok-tui: with it, the same id in the same file always gives the same uuid.
NAMESPACE = uuid.UUID("5c0b3f3e-8f7a-4d55-9a43-4d9f3e0c1b27")
MOST_TITLE = 200
NOT_IMPORTED = "[{what} not imported]"


class ForeignFormatError(ByokError):
    """A file that is not the export it was said to be: nothing was imported."""


@dataclass(frozen=True, slots=True)
class ForeignSummary:
    name: str  # ChatGPT, Claude
    bot_name: str
    conversations_in_file: int
    conversations_added: int
    messages_added: int
    skipped_conversations: dict[str, int]  # why → how many
    skipped_messages: dict[str, int]


def read_export(path: Path) -> bytes:
    """The bytes of `conversations.json`: the file itself, or the member of that name in a
    zip. Bounded before it is read whole."""
    try:
        # Read whole, bounded, before anything looks into it: a FIFO or /dev/zero is refused
        # at once (zipfile's own check would read it for ever).
        raw = read_bounded(path, MAX_FILE_BYTES)
        if zipfile.is_zipfile(io.BytesIO(raw)):
            with zipfile.ZipFile(io.BytesIO(raw)) as archive:
                names = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == MEMBER]
                if not names:
                    raise ForeignFormatError(f"{path} holds no {MEMBER}")
                with archive.open(names[0]) as member:
                    data = member.read(MAX_FILE_BYTES + 1)
        else:
            data = raw
    except OSError as error:
        raise ForeignFormatError(f"cannot read {path}: {error.strerror or error}") from None
    except zipfile.BadZipFile as error:
        raise ForeignFormatError(f"cannot read {path}: {error}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ForeignFormatError(f"{MEMBER} in {path} is larger than {MAX_FILE_BYTES >> 20} MB")
    return data


class _Skip(Exception):
    """This conversation cannot be imported, for this reason."""


def _text(value: Any, most: int = MAX_TEXT) -> str | None:
    return value if isinstance(value, str) and len(value) <= most else None


def _time(value: Any, fallback: float) -> float:
    """A Unix time (ChatGPT) or an ISO 8601 one (Claude); `fallback` when it is neither."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value).timestamp()
        except ValueError:
            return fallback
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if number and 0 <= value <= LATEST_TIME else fallback


def _uuid(source: Source, *ids: str) -> str:
    return str(uuid.uuid5(NAMESPACE, ":".join((source, *ids))))


def _message(
    message_uuid: str, role: str, content: str, created: float, parent: str | None, **more: Any
) -> dict[str, Any]:
    # Anything shaped like a provider's key is redacted: a key pasted into a chat there
    # elsewhere is still a key, and it is not kept here.
    return {
        "uuid": message_uuid,
        "role": role,
        "content": redact_keys(content),
        "reasoning": redact_keys(more.get("reasoning", "")),
        "provider": more.get("provider"),
        "model": more.get("model"),
        "status": "complete",
        "created": created,
        "parent_uuid": parent,
    }


def _object(value: Any) -> dict[str, Any]:
    """`value` if it is an object, else an empty one: a field of the wrong type is absent."""
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    """`value` if it is a list, else an empty one: a field of the wrong type is absent."""
    return value if isinstance(value, list) else []


def _chatgpt_text(message: dict[str, Any], skipped: Counter[str]) -> str | None:
    """The text a ChatGPT message shows in the conversation, or None (and why, counted)."""
    role = _object(message.get("author")).get("role")
    metadata = _object(message.get("metadata"))
    if role not in ("user", "assistant"):
        skipped["system and tool messages"] += 1
        return None
    if metadata.get("is_visually_hidden_from_conversation") or message.get("weight") == 0:
        skipped["hidden or deleted messages"] += 1
        return None
    if message.get("recipient") not in (None, "all"):
        skipped["tool calls (code runs, browsing)"] += 1
        return None
    content = message.get("content")
    kind = content.get("content_type") if isinstance(content, dict) else None
    if kind not in ("text", "multimodal_text") or not isinstance(content, dict):
        skipped["non-text messages (code, browsing, reasoning notes)"] += 1
        return None
    parts = content.get("parts")
    pieces: list[str] = []
    for part in parts if isinstance(parts, list) else []:
        if isinstance(part, str):
            pieces.append(part)
        else:  # an image, an audio clip, a file: named, not imported
            skipped["images and other non-text parts (marked in the text)"] += 1
            what = part.get("content_type", "a part") if isinstance(part, dict) else "a part"
            pieces.append(NOT_IMPORTED.format(what=clean_line(str(what))[:60]))
    text = "\n".join(pieces)
    if not text.strip():
        skipped["empty messages"] += 1
        return None
    if len(text) > MAX_TEXT:
        skipped["messages longer than 10 MB"] += 1
        return None
    return text


def _found(
    conversation: dict[str, Any],
    ids: tuple[str, str | None],
    fields: tuple[str, str],
    started: float,
    messages: list[dict[str, Any]],
) -> dict[str, Any]:
    """A conversation found in the file. `ids`: its id, and the message its branch on screen
    ends at; `fields`: where the file keeps its title and its last change."""
    if not messages:
        raise _Skip("no text messages")
    return {
        "id": ids[0],
        "title": conversation.get(fields[0]),
        "created": started,
        "updated": _time(conversation.get(fields[1]), started),
        "current": ids[1],
        "messages": messages,
    }


def _chatgpt(conversation: dict[str, Any], skipped: Counter[str]) -> dict[str, Any]:
    conv_id = _text(conversation.get("conversation_id") or conversation.get("id"), 200)
    mapping = conversation.get("mapping")
    if not conv_id or not isinstance(mapping, dict):
        raise _Skip("malformed (no id or no mapping)")
    nodes = {k: v for k, v in mapping.items() if isinstance(k, str) and isinstance(v, dict)}
    started = _time(conversation.get("create_time"), 0.0)
    roots = [k for k, v in nodes.items() if _text(v.get("parent")) not in nodes]
    shown_as: dict[str, str | None] = {}  # node → the imported message it ends at
    messages: list[dict[str, Any]] = []
    stack: list[tuple[str, str | None]] = [(root, None) for root in reversed(roots)]
    while stack:  # depth first, in the order of each node's children; a cycle is cut
        node_id, above = stack.pop()
        if node_id in shown_as:
            continue
        message = nodes[node_id].get("message")
        text = _chatgpt_text(message, skipped) if isinstance(message, dict) else None
        if text is not None and isinstance(message, dict):
            metadata = _object(message.get("metadata"))
            role = message["author"]["role"]
            model = _text(metadata.get("model_slug"), 200) if role == "assistant" else None
            kept = _uuid("chatgpt", conv_id, node_id)
            created = _time(message.get("create_time"), started)
            provider = history_provider("chatgpt").id if role == "assistant" else None
            messages.append(
                _message(kept, role, text, created, above, provider=provider, model=model)
            )
            above = kept
        shown_as[node_id] = above
        children = nodes[node_id].get("children")
        for child in reversed(children if isinstance(children, list) else []):
            if isinstance(child, str) and child in nodes and child not in shown_as:
                stack.append((child, above))
    current = conversation.get("current_node")
    on_screen = shown_as.get(current) if isinstance(current, str) else None
    fields = ("title", "update_time")
    return _found(conversation, (conv_id, on_screen), fields, started, messages)


def _claude_text(message: dict[str, Any], skipped: Counter[str]) -> tuple[str, str]:
    """The text and the reasoning of a Claude message; what is neither is counted."""
    content = message.get("content")
    texts: list[str] = []
    reasoning: list[str] = []
    if isinstance(content, list):
        for item in content:
            kind = item.get("type") if isinstance(item, dict) else None
            if kind == "text" and isinstance(item.get("text"), str):
                texts.append(item["text"])
            elif kind == "thinking" and isinstance(item.get("thinking"), str):
                reasoning.append(item["thinking"])
            else:
                skipped["tool calls, results and other non-text parts"] += 1
    elif isinstance(message.get("text"), str):
        texts.append(message["text"])
    for attached in _list(message.get("attachments")):
        if isinstance(attached, dict) and isinstance(attached.get("extracted_content"), str):
            name = clean_line(str(attached.get("file_name") or "attachment"))[:200]
            texts.append(f"{name}:\n\n````\n{attached['extracted_content']}\n````")
    for file in _list(message.get("files")):
        if isinstance(file, dict):
            skipped["images and files without text (marked in the text)"] += 1
            name = clean_line(str(file.get("file_name") or "a file"))[:200]
            texts.append(NOT_IMPORTED.format(what=name))
    return "\n\n".join(texts), "\n\n".join(reasoning)


def _claude(conversation: dict[str, Any], skipped: Counter[str]) -> dict[str, Any]:
    conv_id = _text(conversation.get("uuid"), 200)
    chat = conversation.get("chat_messages")
    if not conv_id or not isinstance(chat, list):
        raise _Skip("malformed (no uuid or no chat_messages)")
    started = _time(conversation.get("created_at"), 0.0)
    model = _text(conversation.get("model"), 200)
    imported: dict[str, str] = {}  # the file's message uuid → ours
    messages: list[dict[str, Any]] = []
    previous: str | None = None
    for number, raw in enumerate(chat):
        if not isinstance(raw, dict):
            skipped["malformed messages"] += 1
            continue
        role = {"human": "user", "assistant": "assistant"}.get(str(raw.get("sender")))
        if role is None:
            skipped["messages from an unknown sender"] += 1
            continue
        text, reasoning = _claude_text(raw, skipped)
        if not text.strip():
            skipped["empty messages"] += 1
            continue
        if len(text) > MAX_TEXT or len(reasoning) > MAX_TEXT:
            skipped["messages longer than 10 MB"] += 1
            continue
        own_id = _text(raw.get("uuid"), 200) or str(number)
        parent = raw.get("parent_message_uuid")
        above = imported.get(parent, previous) if isinstance(parent, str) else previous
        previous = imported[own_id] = _uuid("claude", conv_id, own_id)
        messages.append(
            _message(
                previous,
                role,
                text,
                _time(raw.get("created_at"), started),
                above,
                reasoning=reasoning,
                provider=history_provider("claude").id if role == "assistant" else None,
                model=model if role == "assistant" else None,
            )
        )
    leaf = conversation.get("current_leaf_message_uuid")
    on_screen = imported.get(leaf) if isinstance(leaf, str) else None
    fields = ("name", "updated_at")
    return _found(conversation, (conv_id, on_screen), fields, started, messages)


def _title(found: dict[str, Any]) -> str:
    from byok_tui.core.titles import title_for

    title = found["title"]
    if isinstance(title, str) and title.strip():
        return clean_line(title)[:MOST_TITLE]
    first = next((m["content"] for m in found["messages"] if m["role"] == "user"), None)
    return title_for(first)


# A field each export's conversations have and the other's never do.
_MARKS: dict[Source, str] = {"chatgpt": "mapping", "claude": "chat_messages"}


def _check_not_the_other(data: list[Any], source: Source) -> None:
    """The file given with the wrong --from (Claude's named ChatGPT's, or the other way):
    said plainly rather than every conversation skipped as malformed."""
    other: Source = "claude" if source == "chatgpt" else "chatgpt"
    entries = [entry for entry in data[:50] if isinstance(entry, dict)]
    if (
        entries
        and not any(_MARKS[source] in entry for entry in entries)
        and all(_MARKS[other] in entry for entry in entries)
    ):
        raise ForeignFormatError(
            f"this looks like {NAMES[other]}'s export, not {NAMES[source]}'s: import it with "
            f"--from {other}"
        )


def import_foreign(
    store: Store, raw: bytes, source: Source, progress: Progress | None = None
) -> ForeignSummary:
    """Import `raw` (a `conversations.json` of `source`) into the store, all or nothing."""
    name = NAMES[source]
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ForeignFormatError(
            f"the file is not {name}'s conversations.json (not JSON)"
        ) from None
    if not isinstance(data, list):
        raise ForeignFormatError(
            f"the file is not {name}'s conversations.json (it holds no list of conversations)"
        )
    _check_not_the_other(data, source)
    convert = _chatgpt if source == "chatgpt" else _claude
    skipped_conversations: Counter[str] = Counter()
    skipped_messages: Counter[str] = Counter()
    bot_uuid = _uuid(source, "bot")
    conversations = []
    for entry in data:
        try:
            if not isinstance(entry, dict):
                raise _Skip("malformed (not an object)")
            found = convert(entry, skipped_messages)
        except _Skip as why:
            skipped_conversations[str(why)] += 1
            continue
        conversations.append(
            {
                "uuid": _uuid(source, found["id"]),
                "bot_uuid": bot_uuid,
                "title": _title(found),
                "created": found["created"],
                "updated": found["updated"],
                "current_uuid": found["current"],
                "messages": found["messages"],
            }
        )
    provider = history_provider(source)
    bot = BotConfig(name, provider.id, provider.default_model)
    document = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "bots": [{"uuid": bot_uuid, **bot_fields(bot)}] if conversations else [],
        "conversations": conversations,
    }
    summary = import_document(store, document, progress)
    bot_name = next((b.name for b in store.bots() if b.uuid == bot_uuid), name)
    return ForeignSummary(
        name,
        bot_name,
        len(data),
        summary.conversations_added,
        summary.messages_added,
        dict(skipped_conversations),
        dict(skipped_messages),
    )
