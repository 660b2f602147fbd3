"""Markdown as blocks: where a text's top-level blocks begin and end, its fenced code blocks,
and about how many lines it takes, read with the block parser Rich renders with. No Textual:
the widgets that draw Markdown (widgets/markdown_text.py) and the threads that split a large
text for them both use it.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING

from byok_tui.core.sanitize import clean_line

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

SETTLE_CHARS = 800  # finished blocks are frozen in parts of at least this much text


@lru_cache(maxsize=1)
def block_parser() -> MarkdownIt:
    # The same parser Rich renders with, so a split falls where Rich sees a block boundary;
    # blocks only, since inline parsing (emphasis, code spans) cannot move a boundary and is
    # most of the cost. Imported when the first reply is drawn: start-up does not pay for it.
    from markdown_it import MarkdownIt

    return MarkdownIt().enable("strikethrough").enable("table").disable("inline")


@dataclass(frozen=True, slots=True)
class CodeBlock:
    """A fenced code block of a reply: what its copy target copies."""

    language: str  # the fence's first word ('' when it names none)
    code: str

    @property
    def label(self) -> str:
        """`⧉ python · 12 lines`: what the block's copy target says."""
        lines = self.code.count("\n") or 1
        return f"⧉ {self.language or 'code'} · {lines} line{'s' if lines > 1 else ''}"


FENCE_MARKS = ("```", "~~~")


def code_blocks(text: str, tokens: list[Token] | None = None) -> list[CodeBlock]:
    """Every fenced code block of `text`, in order, inside lists and quotes too. `tokens`:
    the text's, when it has been parsed already."""
    if not any(mark in text for mark in FENCE_MARKS):
        return []  # no parse for the many replies without one
    return [
        CodeBlock(clean_line(token.info).split(" ")[0][:40], token.content)
        for token in (block_parser().parse(text) if tokens is None else tokens)
        if token.type == "fence"
    ]


_collector_lock = threading.Lock()
_collector_pauses = 0


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a worker parses a large text: the
    parse holds hundreds of thousands of tokens at once, and every collection meanwhile
    walked them all with the event loop stopped (sampled opening a 3 MB reply: 10-40 ms
    a collection, 54 ms for the oldest generation). The tokens hold no cycles: they are
    freed as the parse returns. Pauses may overlap (two large replies at once)."""
    global _collector_pauses
    with _collector_lock:
        _collector_pauses += 1
        gc.disable()
    try:
        yield
    finally:
        with _collector_lock:
            _collector_pauses -= 1
            if not _collector_pauses:
                gc.enable()


def finished_blocks(text: str, tokens: list[Token] | None = None) -> tuple[list[str], str]:
    """Split Markdown into its finished top-level blocks and the live rest: every whole block
    before the last one, which more text can no longer change, then everything after.
    Together they are `text`, and every split falls at the start of a line. `tokens`: the
    text's, when it has been parsed already."""
    starts: list[tuple[int, str]] = []  # (first line, token type) of each top-level block
    for token in block_parser().parse(text) if tokens is None else tokens:
        if token.level == 0 and token.map is not None and token.nesting in (0, 1):
            # Rich puts no blank line after a rule, and a continued part starts with one:
            # keep a rule with the block after it.
            if starts and starts[-1][1] == "hr":
                starts[-1] = (starts[-1][0], token.type)
            else:
                starts.append((token.map[0], token.type))
    if len(starts) < 2:
        return [], text
    lines = text.splitlines(keepends=True)
    blocks = ["".join(lines[start:end]) for (start, _), (end, _) in pairwise(starts)]
    blocks[0] = "".join(lines[: starts[1][0]])  # with any blank lines before the first block
    return blocks, text[sum(map(len, blocks)) :]


def group_blocks(blocks: list[str]) -> tuple[list[str], str]:
    """Group whole blocks into texts of at least SETTLE_CHARS, one per part; what is left
    over, too short for a part of its own, is returned to stay live."""
    texts: list[str] = []
    gathered = ""
    for block in blocks:
        gathered += block
        if len(gathered) >= SETTLE_CHARS:
            texts.append(gathered)
            gathered = ""
    return texts, gathered


def estimated_height(text: str, width: int) -> int:
    """About how many lines Rich draws `text` in: each source line wrapped at `width`.
    Good enough to place a part nobody is looking at; it is drawn for real before anyone
    does."""
    if width <= 0:
        return 0
    return sum(max(1, -(-len(line) // width)) for line in text.splitlines())
