"""A stored reply that called tools, sent again with a later message: its rounds as the
turns they were (what the model said and asked, what went back, then its answer), or, to a
request that offers no tools, as the text alone (a family refuses tool turns in a request
that declares no tools). No I/O, no Textual.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from byok_tui.providers.types import ChatMessage, ToolCall, ToolResult


def reply_turns(content: str, rounds: Sequence[Any]) -> tuple[ChatMessage, ...] | None:
    """The turns of a reply whose `rounds` (as stored) called tools, ending with its last
    words; None when the stored rounds do not read as the reply's (then its text is sent
    alone)."""
    read = _read_rounds(content, rounds)
    if read is None:
        return None
    turns, at = read
    return (*turns, ChatMessage("assistant", content[at:]))


def answer_start(content: str, rounds: Sequence[Any]) -> int | None:
    """Where a reply's words after its last tool round begin (None: its rounds do not read
    as the reply's)."""
    read = _read_rounds(content, rounds)
    return None if read is None else read[1]


def _read_rounds(content: str, rounds: Sequence[Any]) -> tuple[list[ChatMessage], int] | None:
    """Each round as two turns, and where the words after them begin. The reply's text is
    each round's words in order, a paragraph break after those that did not end a line,
    then the answer."""
    turns: list[ChatMessage] = []
    at = 0
    try:
        for entry in rounds:
            said = str(entry.get("said") or "")
            if not content.startswith(said, at):
                return None
            at += len(said)
            if at and not content[:at].endswith("\n") and content.startswith("\n\n", at):
                at += 2  # the break put before the next round's words
            calls = tuple(_call(c) for c in entry["calls"])
            results = tuple(_result(r) for r in entry["results"])
            if not calls:
                return None
            turns.append(ChatMessage("assistant", said, tool_calls=calls))
            turns.append(ChatMessage("user", "", tool_results=results))
    except (AttributeError, KeyError, TypeError):
        return None
    return (turns, at) if turns else None


def _call(raw: dict[str, Any]) -> ToolCall:
    text = str(raw.get("arguments") or "{}")
    try:
        arguments = json.loads(text)
    except ValueError:
        arguments = None
    signature = raw.get("signature")
    return ToolCall(
        str(raw["id"]),
        str(raw["name"]),
        text,
        arguments if isinstance(arguments, dict) else None,
        raw.get("problem") or None,
        signature if isinstance(signature, str) else None,
    )


def _result(raw: dict[str, Any]) -> ToolResult:
    return ToolResult(
        str(raw["id"]), str(raw["name"]), str(raw.get("content") or ""), bool(raw.get("error"))
    )


def without_tool_turns(messages: Sequence[ChatMessage]) -> tuple[ChatMessage, ...]:
    """The conversation with every tool round as its words only: a turn that carried
    results goes, and a reply's words, split by its rounds, are one turn again."""
    if not any(m.tool_calls or m.tool_results for m in messages):
        return tuple(messages)
    kept: list[ChatMessage] = []
    joining = False  # the last kept turn is a reply's words before a call
    for message in messages:
        if message.tool_results:
            continue
        if joining and message.role == "assistant":
            last = kept[-1]
            words = "\n\n".join(t for t in (last.content, message.content) if t)
            kept[-1] = ChatMessage("assistant", words)
        else:
            kept.append(ChatMessage(message.role, message.content, message.images))
        joining = bool(message.tool_calls)
    return tuple(kept)


def turn_tool_chars(message: ChatMessage) -> int:
    """What a turn's calls and results add to what is sent, in characters."""
    calls = sum(len(c.name) + len(c.raw_arguments) for c in message.tool_calls)
    return calls + sum(len(r.content) for r in message.tool_results)
