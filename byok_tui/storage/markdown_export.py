"""A conversation as a Markdown document: its title, then each turn under a heading saying
who wrote it, with which model, and when. Replies are Markdown already and go in as they are
(their code fences kept). Reads the store it is given, writes nothing; never a key: each
document is redacted last.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from byok_tui import __version__
from byok_tui.core.money import format_usd
from byok_tui.core.records import Bot, Conversation, Message
from byok_tui.core.redaction import redact_keys

if TYPE_CHECKING:
    from byok_tui.storage.store import Store

DOCUMENTS_BETWEEN = "\n\n---\n\n"


def when(timestamp: float) -> str:
    """A time as the reader's clock shows it: `2026-11-25 10:03`."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))


def _heading(message: Message) -> str:
    who = ["You"] if message.role == "user" else ["Assistant"]
    if message.role == "assistant" and (message.provider or message.model):
        who.append(" ".join(part for part in (message.provider, message.model) if part))
    return f"### {' · '.join([*who, when(message.created)])}"


def _tool_lines(rounds: list[dict[str, Any]]) -> str:
    """A reply's tool calls, one line a call: the tool, its arguments, what came back."""
    lines = []
    for entry in rounds:
        results = {r.get("id"): r for r in entry.get("results", []) if isinstance(r, dict)}
        for call in entry.get("calls", []):
            if not isinstance(call, dict):
                continue
            result = results.get(call.get("id"), {})
            came = "error" if result.get("error") else "result"
            size = len(str(result.get("content", "")))
            lines.append(
                f"- `{call.get('name', '')}` `{call.get('arguments', '')}` → {came}, "
                f"{size:,} characters"
            )
    return "*Tool calls:*\n" + "\n".join(lines) if lines else ""


def _alternatives_line(others: list[Message]) -> str:
    """The other replies to the same message (a compare's other targets, a regeneration):
    each one's model and figures, or its error; their text stays in the app and the JSON
    export."""
    said = []
    for other in others:
        figures = [" ".join(part for part in (other.provider, other.model) if part) or "?"]
        if other.input_tokens is not None or other.output_tokens is not None:
            figures.append(f"{other.input_tokens or 0:,} in, {other.output_tokens or 0:,} out")
        if other.cost_usd is not None:
            figures.append(format_usd(other.cost_usd))
        if other.status == "error":
            figures.append(f"error: {other.error_message or other.error_kind or 'unknown'}")
        elif other.status == "partial":
            figures.append("partial")
        said.append(" · ".join(figures))
    return f"*Alternatives of this reply: {'; '.join(said)}*"


def _turn(
    message: Message,
    attached: list[str],
    tools: list[dict[str, Any]] | None = None,
    others: list[Message] | None = None,
) -> str:
    parts = [_heading(message)]
    if tools and (said := _tool_lines(tools)):
        parts.append(said)
    if message.content:
        parts.append(message.content.rstrip("\n"))
    if attached:
        parts.append(f"*Attached: {', '.join(attached)}*")
    if message.status == "partial":
        parts.append("*Partial reply: it stopped before its end.*")
    if message.error_message:
        parts.append(f"*Error: {message.error_message}*")
    if others:
        parts.append(_alternatives_line(others))
    return "\n\n".join(parts)


def conversation_markdown(
    conversation: Conversation,
    bot: Bot,
    messages: list[Message],
    attached: dict[int, list[str]] | None = None,
    tools: dict[int, list[dict[str, Any]]] | None = None,
    every: list[Message] | None = None,
) -> str:
    """`messages`: the branch on screen, in order; `attached`: the files each message has
    (by id), named as on screen (`notes.md · 2 KB`); `tools`: the tool calls of the replies
    that made any (by id); `every`: every message of every branch (the replies' alternatives
    are named under them)."""
    attached, tools = attached or {}, tools or {}
    replies_to: dict[int | None, list[Message]] = {}
    for message in every or []:
        if message.role == "assistant":
            replies_to.setdefault(message.parent_id, []).append(message)

    def others(message: Message) -> list[Message]:
        if message.role != "assistant":
            return []
        return [m for m in replies_to.get(message.parent_id, []) if m.id != message.id]

    about = (
        f"*{bot.name} · started {when(conversation.created)} · {len(messages)} messages · "
        f"exported by byok-tui {__version__}*"
    )
    turns = [
        _turn(message, attached.get(message.id, []), tools.get(message.id), others(message))
        for message in messages
    ]
    document = "\n\n".join([f"# {conversation.title}", about, *turns]) + "\n"
    return redact_keys(document)


def documents(markdowns: Iterable[str]) -> str:
    """Several conversations in one document, a rule between them."""
    return DOCUMENTS_BETWEEN.join(markdown.rstrip("\n") for markdown in markdowns) + "\n"


def export_markdown(store: Store, conversation_id: int | None = None) -> str:
    """One conversation (the branch on screen), or with None every conversation, oldest
    first, as one Markdown document."""
    bots = {bot.id: bot for bot in store.bots()}
    if conversation_id is not None:
        chosen = [store.conversation(conversation_id)]
    else:
        chosen = sorted(
            (c for bot_id in bots for c in store.conversations(bot_id)), key=lambda c: c.created
        )
    return documents(
        conversation_markdown(
            c,
            bots[c.bot_id],
            store.messages(c.id),
            store.attachment_labels(c.id),
            store.tool_turns_in(c.id),
            store.all_messages(c.id),
        )
        for c in chosen
    )
