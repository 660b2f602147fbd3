"""A reply's Markdown in parts: stretches of whole blocks drawn by Rich, each once per width,
and the text a part is drawn from. No widget: widgets/markdown_text.py lays the parts out and
draws them; only the block still being written is drawn again as a reply streams.
"""

from __future__ import annotations

import io
from collections import OrderedDict
from functools import lru_cache
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from rich.segment import Segment
from textual.strip import Strip

from byok_tui.compat import markdown_parsed_by_one_parser
from byok_tui.widgets.markdown_blocks import block_parser, estimated_height

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions
    from rich.markdown import Markdown as RichMarkdown

# A one-line paragraph rendered before a continued part, then dropped: Rich then lays the
# part out exactly as in the middle of the whole reply (the blank line between blocks,
# no start-of-document quirks), so a streamed reply draws what the whole reply would.
CONTINUATION = "\u200b\n\n"


# Parts drawn before are kept, per console (one per app), for a reply shown again: back
# from a compare or to a branch, the conversation is read again and ten long replies drawn
# anew froze the screen for a second. Bounded by the text kept; the lines of replies on
# screen are shared with them, not copied.
KEPT_DRAWN_CHARS = 250_000
DrawnKey = tuple[str, bool, int]  # a part's text, whether it is continued, the width
_kept: WeakKeyDictionary[Console, OrderedDict[DrawnKey, list[Strip]]] = WeakKeyDictionary()


def kept_drawings(console: Console) -> list[DrawnKey]:
    """What is kept for `console`, oldest first."""
    return list(_kept.get(console, ()))


def _keep(console: Console, key: DrawnKey, lines: list[Strip]) -> None:
    kept = _kept.setdefault(console, OrderedDict())
    kept[key] = lines
    total = sum(len(text) for text, _, _ in kept)
    while total > KEPT_DRAWN_CHARS and kept:
        (text, _, _), _ = kept.popitem(last=False)
        total -= len(text)


def render_markdown(text: str, *, continued: bool = False) -> RichMarkdown:
    # Links show their address after the text (hyperlinks=False): a reply cannot hide where a
    # link goes behind friendly words.
    source = CONTINUATION + text if continued else text
    return markdown_parsed_by_one_parser(source, code_theme="monokai", hyperlinks=False)


@lru_cache(maxsize=1)
def warm_up() -> None:
    """Load what drawing the first reply needs: Rich's Markdown, the block parser, Pygments'
    Python lexer and the code theme (once). Done cold, in the middle of the first reply,
    that took ~45 ms of the event loop; called from a thread before any reply is drawn."""
    from rich.console import Console

    block_parser()
    sample = "Warm **up** with `code`:\n\n- a list\n\n```python\ndef up(): pass\n```\n"
    Console(width=40, force_terminal=True, file=io.StringIO()).print(render_markdown(sample))


class Part:
    """A stretch of whole Markdown blocks and its lines, rendered once per width.

    A `deferred` part is not rendered yet: its height is an estimate until it is drawn or
    settled, so text that scrolls past unseen costs nothing while a reply streams.
    """

    def __init__(self, text: str, *, continued: bool, deferred: bool = False) -> None:
        self.text = text
        self.continued = continued  # follows another part of the same Markdown
        self.deferred = deferred
        self.lines: list[Strip] = []
        self.width = -1  # the width `lines` were rendered at
        self.estimate = (-1, 0)  # (width, estimated height) while deferred
        self.styled: list[Strip | None] = []  # `lines` with the drawing's base style, when drawn

    def set_text(self, text: str, *, continued: bool) -> None:
        self.text, self.continued, self.width = text, continued, -1
        self.estimate = (-1, 0)

    def estimated_height(self, width: int) -> int:
        """About how many lines it takes at `width` (estimated_height, worked out once per
        width and text: a reply of megabytes has thousands of parts)."""
        if self.estimate[0] != width:
            self.estimate = (width, estimated_height(self.text, width))
        return self.estimate[1]

    def render(
        self, console: Console, options: ConsoleOptions, width: int, *, keep: bool = False
    ) -> list[Strip]:
        """Its lines at `width`, drawn by `console` (the app's) with `options`; `keep`: its
        text will not change, so they are kept for it, or were (KEPT_DRAWN_CHARS)."""
        if width <= 0 or not self.text.strip():
            return []
        key = (self.text, self.continued, width)
        drawn = _kept.get(console) if keep else None
        if drawn is not None and (kept := drawn.get(key)) is not None:
            drawn.move_to_end(key)
            return list(kept)  # a list of its own: lines are added to a part's
        lines = self._rendered(console, options, width)
        if keep:
            _keep(console, key, list(lines))
        return lines

    def _rendered(self, console: Console, options: ConsoleOptions, width: int) -> list[Strip]:
        options = options.update(highlight=False, width=width, height=None)
        markdown = render_markdown(self.text, continued=self.continued)
        lines = list(
            Segment.split_and_crop_lines(
                console.render(markdown, options), width, include_new_lines=False
            )
        )
        if self.continued:
            del lines[:1]  # the continuation paragraph
        return [Strip(line, width) for line in lines]


def first_difference(before: list[Strip] | None, after: list[Strip] | None) -> int:
    """The first line at which `after` differs from `before` (0 when either is unknown)."""
    if before is None or after is None:
        return 0
    for index, (line_before, line_after) in enumerate(zip(before, after, strict=False)):
        if line_before != line_after:
            return index
    return min(len(before), len(after))
