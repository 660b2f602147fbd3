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
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from rich.markdown import Markdown as RichMarkdown

SETTLE_CHARS = 800  # finished blocks are frozen once at least this much text has gathered


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # The same parser Rich renders with, so a split falls where Rich sees a block boundary.
    # Imported when the first reply is drawn: start-up does not pay for it.
    from markdown_it import MarkdownIt

    return MarkdownIt().enable("strikethrough").enable("table")


def split_finished(text: str) -> tuple[str, str]:
    """Split Markdown into (finished, live): `finished` is every whole top-level block before
    the last one, which more text can no longer change; `live` is the rest. Their sum is
    `text`, and the split falls at the start of a line."""
    starts: list[tuple[int, str]] = []  # (first line, token type) of each top-level block
    for token in _parser().parse(text):
        if token.level == 0 and token.map is not None and token.nesting in (0, 1):
            starts.append((token.map[0], token.type))
    # Rich puts no blank line after a rule, and a continued segment starts with one: keep a
    # rule with the block after it.
    while len(starts) > 1 and starts[-2][1] == "hr":
        starts.pop()
    if len(starts) < 2:
        return "", text
    lines = text.splitlines(keepends=True)
    finished = "".join(lines[: starts[-1][0]])
    return finished, text[len(finished) :]


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
    """Markdown rendered to lines once per width, and drawn from those lines."""

    DEFAULT_CSS = "MarkdownLines { height: auto; }"

    def __init__(self, text: str, *, continued: bool = False, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.text = text
        self.continued = continued  # follows another segment of the same Markdown
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
        return len(self._lines_at(width))

    def render_lines(self, crop: Region) -> list[Strip]:
        # The base style (theme colours, a focused reply's background) is applied on drawing,
        # so the cached lines stay right when it changes. It is worked out once per drawing,
        # not per line: `rich_style` walks every ancestor.
        self._base = self.rich_style
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
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
        finished, rest = split_finished(self._live)
        if len(finished) >= SETTLE_CHARS:
            frozen = MarkdownLines(finished, continued=live.continued, classes="frozen")
            self.mount(frozen, before=live)
            self._live = rest
        live.set_class(not self._live.strip(), "empty")
        live.update(self._live, continued=len(self.children) > 1)
