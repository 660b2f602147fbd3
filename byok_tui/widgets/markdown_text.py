"""Markdown that can grow while a reply streams, at a cost that does not grow with the reply.

Textual's own Markdown widget mounts a widget per block (and per list item, per table cell), and
mounting is the slow part: a long reply streamed into it stalled the event loop for hundreds of
milliseconds. Here a reply is one widget drawing Rich's Markdown in parts: blocks the parser
has finished with are frozen into parts that are rendered once per width (a Static
would render twice on every layout: once to measure, once to draw), and only the block still
being written is re-rendered as text arrives. Nothing is mounted while a reply streams: each
mount cost a layout of its own once it completed. A part and its drawing are
widgets/markdown_parts.py; this widget lays the parts out, draws them and settles the deferred.
"""

from __future__ import annotations

import functools
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate
from time import monotonic, perf_counter

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.message import Message
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

from byok_tui.compat import scroll_in_layout, virtual_size_set_by_layout
from byok_tui.widgets.markdown_blocks import (
    SETTLE_CHARS,
    CodeBlock,
    block_parser,
    code_blocks,
    collector_paused,
    estimated_height,
    finished_blocks,
    group_blocks,
)
from byok_tui.widgets.markdown_parts import Part, first_difference

# An append this large cannot come from a model streaming live (it would be some 40,000
# characters a second at 20 frames a second): the reader is catching up with text that was
# already waiting, so the screen works on the newest text first.
BURST_CHARS = 2000
BURST_QUIET = 0.25  # seconds without a burst before deferred parts are rendered
SETTLE_BUDGET = 0.008  # seconds of deferred rendering per turn of the event loop
SETTLE_PAUSE = 0.02  # between those turns, so keys and new text go first
# Text given whole beyond this (a stored reply) is split into blocks in a worker thread and
# drawn from its end, the rest as it scrolls into view or a few milliseconds at a time:
# parsing a megabyte of Markdown took ~0.1 s and laying it out in one go ~1.5 s, with
# every key waiting.
LARGE_CHARS = 20_000
# While a reply streams, its height grows this many lines at a time: the new lines are drawn
# into blank ones already laid out, a repaint of the reply alone. Growing a line at a time,
# each frame was a layout of the whole screen and, with the view following, a redraw of the
# whole transcript (~2 + 5 ms): most of the CPU a paced reply cost.
STREAM_HEADROOM = 12


class MarkdownText(Widget):
    """Rendered Markdown; `append` adds text, re-rendering only the unfinished tail.

    When a deferred part turns out taller or shorter than estimated, a reader scrolled up past
    it is kept where they were.
    """

    DEFAULT_CSS = "MarkdownText { height: auto; } MarkdownText.-pending { color: $text-muted; }"
    virtual_size = virtual_size_set_by_layout()

    @dataclass
    class Split(Message, bubble=False):
        """Text given whole was split into parts (`texts`) and what stays live."""

        texts: list[str]
        live: str
        code: list[CodeBlock]  # its code blocks, found in the same parse

    @dataclass
    class CodeBlocksFound(Message):
        """The code blocks of a large text given whole, found as it was split (its reply
        offers a copy target for each)."""

        markdown: MarkdownText
        blocks: list[CodeBlock]

        @property
        def control(self) -> MarkdownText:
            return self.markdown

    def __init__(self, text: str = "", *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.text = text
        self.frozen: list[Part] = []
        # Large text is split in a worker first (pending); text appended meanwhile waits.
        self.pending = len(text) > LARGE_CHARS
        self._appended_while_pending = ""
        self.live = Part("" if self.pending else text, continued=False)
        self._offsets: list[int] = [0]  # the first line of each part, then the total
        self._offsets_width = -1  # the width _offsets were worked out at
        self._offsets_stale = True  # a part changed: work them out again at the next layout
        self._base = Style()  # the base style of the drawing in progress
        self._styled_base: Style | None = None
        self._burst_until = 0.0  # deferred parts wait while text pours in until then
        self._settle_timer: Timer | None = None
        self._headroom = 0  # lines of growth laid out ahead (while streaming)
        self._laid_out_height = -1  # the height last given to the layout
        self._streamed = False  # text was appended: its live part changes as it comes

    @property
    def parts(self) -> list[Part]:
        return [*self.frozen, self.live]

    def on_mount(self) -> None:
        if self.pending:
            self.set_class(True, "-pending")
            self.run_worker(functools.partial(self._split, self.text), thread=True)

    def _split(self, text: str) -> None:
        """In a worker thread: the blocks of `text`, grouped into parts."""
        with collector_paused():
            tokens = block_parser().parse(text)
            blocks, rest = finished_blocks(text, tokens)
            code = code_blocks(text, tokens)
            del tokens  # freed here, with the collector still paused
        texts, leftover = group_blocks(blocks)
        self.post_message(self.Split(texts, leftover + rest, code))

    def on_markdown_text_split(self, message: Split) -> None:
        """Parts off screen are rendered when they scroll into view, or a few milliseconds
        at a time, newest first; the end, where the reader is, at once."""
        self.pending = False
        self.set_class(False, "-pending")
        self.post_message(self.CodeBlocksFound(self, message.code))
        self.frozen = self._frozen(message.texts, after=message.live, defer=True)
        if any(part.deferred for part in self.frozen):
            self._settle_later()
        self.live.set_text(message.live, continued=bool(self.frozen))
        appended, self._appended_while_pending = self._appended_while_pending, ""
        if appended:
            self._grow(appended)
        self._offsets_stale = True
        self.refresh(layout=True)

    def append(self, text: str) -> None:
        self._streamed = True
        self.text += text
        if self.pending:
            self._appended_while_pending += text
            return
        self._grow(text)

    def _grow(self, text: str) -> None:
        width = self._offsets_width
        # Where the live part starts, and what it drew: only the lines after that which now
        # differ are drawn again (any of them may: a table's column grows, a code block's
        # closing padding follows its last line).
        live_start = self._offsets[-2] if len(self._offsets) > 1 else 0
        drawn_before = self.live.lines if self.live.width == width else None
        blocks, rest = finished_blocks(self.live.text + text)
        if blocks:
            bursting = len(text) >= BURST_CHARS
            if bursting:
                self._burst_until = monotonic() + BURST_QUIET
            self._freeze(blocks, after=rest, defer=bursting)
            if any(part.deferred for part in self.frozen):
                self._settle_later()
            live = rest
        else:
            live = self.live.text + text
        self.live.set_text(live, continued=bool(self.frozen))
        laid_out = self._laid_out_height
        if width > 0 and width == self.size.width and laid_out >= 0 and not self._offsets_stale:
            self._lay_out(width)  # what the next layout would work out
            if self._fits(self._offsets[-1]):
                # As tall as laid out (the new words fit on the last line, or in the lines
                # laid out ahead): a repaint of the lines that changed, not a layout of the
                # screen, nor a redraw of the rest of the reply.
                now = self._drawn_from(live_start, width)
                changed = live_start + first_difference(drawn_before, now)
                # To the end of the text drawn before or now, whichever is longer: the blank
                # lines laid out ahead stay blank.
                end = laid_out
                if drawn_before is not None and now is not None:
                    end = min(laid_out, live_start + max(len(drawn_before), len(now)))
                self.refresh(Region(0, changed, width, max(1, end - changed)))
                return
        self._offsets_stale = True
        self.refresh(layout=True)

    def _freeze(self, blocks: list[str], *, after: str, defer: bool) -> None:
        """Finished blocks leave the live part. They join the last frozen part while it is
        shorter than SETTLE_CHARS, drawn alone (as its continuation) and their lines added to
        its own, then make parts of their own: each is rendered once, not again with every
        piece of text until a part's worth has gathered (re-rendering those was most of what
        an append cost: some 800 characters of Markdown drawn ten times a second)."""
        last = self.frozen[-1] if self.frozen else None
        while blocks and last is not None and len(last.text) < SETTLE_CHARS:
            self._extend(last, blocks.pop(0))
        texts, leftover = group_blocks(blocks)
        if leftover:
            texts.append(leftover)
        added = self._frozen(texts, after=after, defer=defer)
        self.frozen += added
        if defer and last is not None and last.width < 0 and not last.deferred:
            # Not drawn yet, and the burst put a screenful after it: drawn only if seen.
            width = self.size.width or self.app.size.width
            below = estimated_height(after, width)
            below += sum(part.estimated_height(width) for part in added)
            last.deferred = below > self.app.size.height

    def _extend(self, part: Part, text: str) -> None:
        """`text` (whole blocks) added to the end of `part`, drawn as what follows it."""
        if part.width > 0 and not part.deferred:
            lines = self._render_part(Part(text, continued=True), part.width)
            part.lines += lines
            part.styled += [None] * len(lines)
        part.text += text
        part.estimate = (-1, 0)

    def _drawn_from(self, row: int, width: int) -> list[Strip] | None:
        """The lines from `row` on, as laid out now (None when a part there is deferred)."""
        index = bisect_right(self._offsets, row) - 1
        parts = self.parts[index:]
        if any(part.deferred for part in parts):
            return None
        lines = [line for part in parts for line in self._lines(part, width)]
        return lines[row - self._offsets[index] :]

    def grow_ahead(self, lines: int) -> None:
        """While text streams in, lay out `lines` blank lines ahead of it (STREAM_HEADROOM);
        0 when it has ended: the height is the text's again."""
        if lines != self._headroom:
            self._headroom = lines
            # Blank lines only: what changes is the height, and the layout's frame draws a
            # widget it resizes. A repaint asked for here was of the whole reply.
            self.refresh(repaint=False, layout=True)

    def _fits(self, height: int) -> bool:
        if self._headroom:
            return height < self._laid_out_height
        return height == self._laid_out_height

    def _height_with_room(self, height: int) -> int:
        if not self._headroom:
            return height
        return (height // self._headroom + 1) * self._headroom

    def _frozen(self, texts: list[str], *, after: str, defer: bool) -> list[Part]:
        """A part per text. While catching up (`defer`), a part with a screenful of text after
        it is not rendered: it would scroll past before anyone saw it."""
        width = self.size.width or self.app.size.width
        below = estimated_height(after, width)  # lines after the part in hand
        continued = bool(self.frozen)
        parts: list[Part] = []
        for index in reversed(range(len(texts))):
            deferred = defer and below > self.app.size.height
            part = Part(texts[index], continued=continued or index > 0, deferred=deferred)
            below += part.estimated_height(width)  # kept: the next layout at `width` reuses it
            parts.append(part)
        parts.reverse()
        return parts

    def _lines(self, part: Part, width: int) -> list[Strip]:
        if width != part.width:
            part.lines = self._render_part(part, width)
            part.width = width
            part.styled = [None] * len(part.lines)
        return part.lines

    def _render_part(self, part: Part, width: int) -> list[Strip]:
        # Kept only for text given whole (a stored reply, shown again as the same text): a
        # streamed reply's parts change or are never drawn alone again.
        keep = not self._streamed
        return part.render(self.app.console, self.app.console_options, width, keep=keep)

    def _height(self, part: Part, width: int) -> int:
        if part.deferred:
            return part.estimated_height(width)
        return len(self._lines(part, width))

    def line_offsets(self, width: int) -> list[int]:
        """The first line of each part at `width`, then the number of lines, as last laid
        out (drawing between two layouts keeps to it)."""
        if width != self._offsets_width:
            self._lay_out(width)
        return self._offsets

    def _lay_out(self, width: int) -> None:
        if -1 < self._offsets_width != width and len(self.text) > LARGE_CHARS:
            # At a new width, a long text is drawn again as it comes into view, and the rest
            # a few milliseconds at a time: all of a megabyte at once froze the screen ~1.5 s.
            # Its last two screenfuls, where the reader is, are drawn at once.
            below = self.live.estimated_height(width)
            for part in reversed(self.frozen):
                if below > 2 * self.app.size.height and part.width != width:
                    part.deferred = True
                below += part.estimated_height(width)
            self._settle_later()
        self._offsets = [0, *accumulate(self._height(part, width) for part in self.parts)]
        self._offsets_width, self._offsets_stale = width, False

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self.pending:
            return 1
        if self._offsets_stale or width != self._offsets_width:
            self._lay_out(width)
        self._laid_out_height = self._height_with_room(self._offsets[-1])
        return self._laid_out_height

    def render_lines(self, crop: Region) -> list[Strip]:
        # The base style (theme colours, a focused reply's background) is applied on drawing,
        # so the rendered lines stay right when it changes. It is worked out once per drawing,
        # not per line: `rich_style` walks every ancestor.
        self._base = self.rich_style
        if self._base != self._styled_base:
            self._styled_base = self._base
            for part in self.parts:
                part.styled = [None] * len(part.lines)
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if self.pending:
            size = f"{len(self.text) / 1_000_000:.1f} MB"
            waiting = Segment(f"Laying out {size} of Markdown…", self._base)
            return Strip([waiting]).adjust_cell_length(width, self._base)
        offsets = self.line_offsets(width)
        parts = self.parts
        index = bisect_right(offsets, y) - 1
        if index >= len(parts):
            return Strip.blank(width, self._base)
        part = parts[index]
        if part.deferred:
            self._settle(part)  # on screen after all
        row = y - offsets[index]
        lines = self._lines(part, width)
        if row >= len(lines):  # laid out at an estimate that was too tall
            return Strip.blank(width, self._base)
        styled = part.styled[row]
        if styled is None:
            styled = part.styled[row] = lines[row].apply_style(self._base)
        return styled

    def _settle(self, part: Part) -> None:
        """Render a deferred part now, and lay out again if it was misjudged."""
        part.deferred = False
        index, width = self.frozen.index(part), self._offsets_width
        # The offsets end with the live part's first line, then the total.
        laid_out_frozen = len(self._offsets) - 2
        if width < 0 or index >= laid_out_frozen:
            return  # not laid out since it was added: the next layout renders it
        top, laid_out = self._offsets[index], self._offsets[index + 1] - self._offsets[index]
        change = len(self._lines(part, width)) - laid_out
        if change:
            self._keep_the_reader_in_place(top + laid_out, change)
            self._offsets_stale = True
            self.refresh(layout=True)

    def _keep_the_reader_in_place(self, row: int, change: int) -> None:
        """Text ending at this widget's line `row` grew or shrank by `change` lines: if that
        is above what the reader is looking at, scroll by as much, in the same layout, so
        that what they are reading does not move."""
        view = next(
            (
                node
                for node in self.ancestors
                if isinstance(node, Widget) and node.allow_vertical_scroll
            ),
            None,
        )
        if view is None or view.scroll_y >= view.max_scroll_y:
            return  # at the bottom, where the newest text keeps them
        # Asked only now: a region after a layout maps every widget again (~20 ms beside a
        # reply of megabytes), and a reader at the bottom, the usual case, needs none.
        if self.region.y + row > view.content_region.y:
            return  # on screen or below it: nothing the reader sees is above it
        scroll_in_layout(view, max(0.0, view.scroll_y + change))

    def _settle_later(self) -> None:
        if self._settle_timer is None:
            self._settle_timer = self.set_timer(SETTLE_PAUSE, self._settle_some)

    def _settle_some(self) -> None:
        """Render deferred parts, newest first, a few milliseconds at a time."""
        self._settle_timer = None
        if (
            monotonic() < self._burst_until
            or len(self._offsets) - 2 < len(self.frozen)
            or self._offsets_stale
        ):
            # Text still pouring in, or parts not laid out yet (settling those would only
            # leave them for the next layout to render, all at once): later.
            self._settle_later()
            return
        started = perf_counter()
        for part in reversed(self.frozen):
            if part.deferred:
                if perf_counter() - started > SETTLE_BUDGET:
                    self._settle_later()
                    return
                self._settle(part)
