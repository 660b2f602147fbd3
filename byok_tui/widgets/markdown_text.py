"""Markdown that can grow while a reply streams, at a cost that does not grow with the reply.

Textual's own Markdown widget mounts a widget per block (and per list item, per table cell), and
mounting is the slow part: a long reply streamed into it stalled the event loop for hundreds of
milliseconds. Here a reply is a few `MarkdownLines` widgets rendering Rich's Markdown: blocks the
parser has finished with are frozen into a segment that is rendered once per width (a Static
would render it twice on every layout: once to measure, once to draw), and only the block still
being written is re-rendered as text arrives.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import pairwise
from time import monotonic, perf_counter
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from rich.markdown import Markdown as RichMarkdown

SETTLE_CHARS = 800  # finished blocks are frozen in segments of at least this much text
# An append this large cannot come from a model streaming live (it would be some 40,000
# characters a second at 20 frames a second): the reader is catching up with text that was
# already waiting, so the screen works on the newest text first.
BURST_CHARS = 2000
BURST_QUIET = 0.25  # seconds without a burst before deferred segments are rendered
SETTLE_BUDGET = 0.008  # seconds of deferred rendering per turn of the event loop
SETTLE_PAUSE = 0.02  # between those turns, so keys and new text go first


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # The same parser Rich renders with, so a split falls where Rich sees a block boundary;
    # blocks only, since inline parsing (emphasis, code spans) cannot move a boundary and is
    # most of the cost. Imported when the first reply is drawn: start-up does not pay for it.
    from markdown_it import MarkdownIt

    return MarkdownIt().enable("strikethrough").enable("table").disable("inline")


def finished_blocks(text: str) -> tuple[list[str], str]:
    """Split Markdown into its finished top-level blocks and the live rest: every whole block
    before the last one, which more text can no longer change, then everything after.
    Together they are `text`, and every split falls at the start of a line."""
    starts: list[tuple[int, str]] = []  # (first line, token type) of each top-level block
    for token in _parser().parse(text):
        if token.level == 0 and token.map is not None and token.nesting in (0, 1):
            # Rich puts no blank line after a rule, and a continued segment starts with one:
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


def segments_of(blocks: list[str]) -> tuple[list[str], str]:
    """Group whole blocks into segments of at least SETTLE_CHARS; what is left over, too
    short for a segment of its own, is returned to stay live."""
    segments: list[str] = []
    gathered = ""
    for block in blocks:
        gathered += block
        if len(gathered) >= SETTLE_CHARS:
            segments.append(gathered)
            gathered = ""
    return segments, gathered


def estimated_height(text: str, width: int) -> int:
    """About how many lines Rich draws `text` in: each source line wrapped at `width`.
    Good enough to place a segment nobody is looking at; it is drawn for real before anyone
    does."""
    if width <= 0:
        return 0
    return sum(max(1, -(-len(line) // width)) for line in text.splitlines())


# A one-line paragraph rendered before a continued segment, then dropped: Rich then lays the
# segment out exactly as in the middle of the whole reply (the blank line between blocks,
# no start-of-document quirks), so a streamed reply draws what the whole reply would.
CONTINUATION = "\u200b\n\n"


def render_markdown(text: str, *, continued: bool = False) -> RichMarkdown:
    # Links show their address after the text (hyperlinks=False): a reply cannot hide where a
    # link goes behind friendly words.
    from rich.markdown import Markdown as RichMarkdown

    source = CONTINUATION + text if continued else text
    return RichMarkdown(source, code_theme="monokai", hyperlinks=False)


class MarkdownLines(Widget):
    """Markdown rendered to lines once per width, and drawn from those lines.

    A `deferred` segment is not rendered yet: its height is estimated until it is drawn or
    `settle` is called, so text that scrolls past unseen costs nothing while a reply streams.
    When the estimate was wrong, a reader scrolled up past it is kept where they were.
    """

    DEFAULT_CSS = "MarkdownLines { height: auto; }"

    def __init__(
        self,
        text: str,
        *,
        continued: bool = False,
        deferred: bool = False,
        classes: str | None = None,
    ) -> None:
        super().__init__(classes=classes)
        self.text = text
        self.continued = continued  # follows another segment of the same Markdown
        self.deferred = deferred
        self._lines: list[Strip] = []
        self._width = -1  # the width _lines were rendered at
        self._styled: list[Strip | None] = []  # _lines with _styled_base applied, when drawn
        self._styled_base: Style | None = None
        self._base = Style()  # the base style of the drawing in progress

    def update(self, text: str, *, continued: bool) -> None:
        self.text, self.continued = text, continued
        self._width = -1
        self.refresh(layout=True)

    def _lines_at(self, width: int) -> list[Strip]:
        if width != self._width:
            console = self.app.console
            options = self.app.console_options.update(highlight=False, width=width, height=None)
            markdown = render_markdown(self.text, continued=self.continued)
            lines = list(
                Segment.split_and_crop_lines(
                    console.render(markdown, options), width, include_new_lines=False
                )
            )
            if self.continued:
                del lines[:1]  # the continuation paragraph
            self._lines = [Strip(line, width) for line in lines] if width > 0 else []
            self._width = width
            self._styled = [None] * len(self._lines)
        return self._lines

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self.deferred:
            return estimated_height(self.text, width)
        return len(self._lines_at(width))

    def settle(self) -> None:
        """Render a deferred segment now, and have it laid out again if it was misjudged."""
        if not self.deferred:
            return
        self.deferred = False
        # Where the layout put it: `size` is only kept up to date for widgets on screen.
        laid_out = self.region
        if not laid_out.width:
            self.refresh(layout=True)  # not laid out yet: the layout renders it
            return
        change = len(self._lines_at(laid_out.width)) - laid_out.height
        if change:
            self._keep_the_reader_in_place(change)
            self.refresh(layout=True)

    def _keep_the_reader_in_place(self, change: int) -> None:
        """A segment above what the reader is looking at grew or shrank: scroll by as much, in
        the same layout, so that what they are reading does not move."""
        view = next(
            (
                node
                for node in self.ancestors
                if isinstance(node, Widget) and node.allow_vertical_scroll
            ),
            None,
        )
        if view is None or self.region.bottom > view.content_region.y:
            return  # on screen or below it: nothing the reader sees is above it
        if view.scroll_y >= view.max_scroll_y:
            return  # at the bottom, where the newest text keeps them
        # Not `scroll_to`: it would stop at the bottom as it was before this change.
        target = max(0.0, view.scroll_y + change)
        view.set_reactive(Widget.scroll_y, target)
        view.set_reactive(Widget.scroll_target_y, target)
        view.vertical_scrollbar.position = target

    def render_lines(self, crop: Region) -> list[Strip]:
        # The base style (theme colours, a focused reply's background) is applied on drawing,
        # so the cached lines stay right when it changes. It is worked out once per drawing,
        # not per line: `rich_style` walks every ancestor.
        self._base = self.rich_style
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        self.settle()  # a deferred segment is on screen after all
        lines = self._lines_at(self.size.width)
        base = self._base
        if y >= len(lines):
            return Strip.blank(self.size.width, base)
        if base != self._styled_base:
            self._styled_base, self._styled = base, [None] * len(lines)
        styled = self._styled[y]
        if styled is None:
            styled = self._styled[y] = lines[y].apply_style(base)
        return styled


class MarkdownText(Vertical):
    """Rendered Markdown; `append` adds text, re-rendering only the unfinished tail."""

    DEFAULT_CSS = """
    MarkdownText { height: auto; }
    MarkdownText > .empty { display: none; }
    """

    def __init__(self, text: str = "", *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.text = text
        self._live = text  # the part after the frozen segments
        self._burst_until = 0.0  # deferred segments wait while text pours in until then
        self._settle_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        live = MarkdownLines(self._live, classes="live")
        live.set_class(not self._live.strip(), "empty")
        yield live

    def append(self, text: str) -> None:
        self.text += text
        self._live += text
        if not self.children:
            return  # not composed yet: compose renders the text
        live = self.query_one(".live", MarkdownLines)
        blocks, rest = finished_blocks(self._live)
        segments, leftover = segments_of(blocks)
        if segments:
            bursting = len(text) >= BURST_CHARS
            if bursting:
                self._burst_until = monotonic() + BURST_QUIET
            self._live = leftover + rest
            frozen = self._frozen(segments, live.continued, defer=bursting)
            self.mount_all(frozen, before=live)
            if any(part.deferred for part in frozen):
                self._settle_later()
        live.set_class(not self._live.strip(), "empty")
        live.update(self._live, continued=len(self.children) > 1)

    def _frozen(self, segments: list[str], continued: bool, *, defer: bool) -> list[MarkdownLines]:
        """A widget per segment. While catching up (`defer`), a segment with a screenful of
        text after it is not rendered: it would scroll past before anyone saw it."""
        width = self.size.width or self.app.size.width
        below = estimated_height(self._live, width)  # lines after the segment in hand
        frozen: list[MarkdownLines] = []
        for index in reversed(range(len(segments))):
            frozen.append(
                MarkdownLines(
                    segments[index],
                    continued=continued or index > 0,
                    deferred=defer and below > self.screen.size.height,
                    classes="frozen",
                )
            )
            below += estimated_height(segments[index], width)
        frozen.reverse()
        return frozen

    def _settle_later(self) -> None:
        if self._settle_timer is None:
            self._settle_timer = self.set_timer(SETTLE_PAUSE, self._settle_some)

    def _settle_some(self) -> None:
        """Render deferred segments, newest first, a few milliseconds at a time."""
        self._settle_timer = None
        if monotonic() < self._burst_until:
            self._settle_later()
            return
        started = perf_counter()
        for part in reversed(self.query(MarkdownLines)):
            if part.deferred:
                if perf_counter() - started > SETTLE_BUDGET:
                    self._settle_later()
                    return
                part.settle()
