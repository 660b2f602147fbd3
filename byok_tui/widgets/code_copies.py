"""The lines under a reply: who answered and what it cost, then one copy target per code
block (`⧉ python · 12 lines`), or, for more than fit in two rows, one row that counts them.

The targets are drawn by the meta line's own widget, their labels whole on as many lines as
they need: a conversation opens with a reply of code every other message, and a widget more
per reply (a row of buttons) made opening 10,000 messages ~60-90 ms slower (benchmark 3).
A click copies the block under the pointer; focused (Tab), ←/→ choose a block and Enter
copies it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.binding import Binding
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.widget import Widget

from byok_tui.compat import virtual_size_set_by_layout
from byok_tui.widgets.markdown_blocks import CodeBlock

GAP = "  "
# Past this many rows of targets they are one row that counts the blocks: 1,297 blocks made
# a wall of targets fill the screen where the reply's last words should be.
MOST_TARGET_ROWS = 2


@dataclass
class CopyWanted(Message):
    """Put `text` on the clipboard (with any key in it replaced)."""

    text: str
    what: str  # what is copied, in words: `code block 2 of 3 (python)`


def copy_wanted(blocks: list[CodeBlock], number: int) -> CopyWanted:
    place = f" {number + 1} of {len(blocks)}" if len(blocks) > 1 else ""
    return CopyWanted(
        blocks[number].code, f"code block{place} ({blocks[number].language or 'no language'})"
    )


class ReplyMeta(Widget):
    """The lines under a reply: who answered, with which key, what it cost; then, once the
    reply is whole, the copy targets of its code blocks (focusable only when it has some)."""

    virtual_size = virtual_size_set_by_layout()
    DEFAULT_CSS = """
    ReplyMeta { width: 100%; height: auto; }
    ReplyMeta:focus { text-style: not italic; }
    """
    BINDINGS = [
        Binding("enter,space", "copy", "Copy block", show=False),
        Binding("left", "choose(-1)", "Previous block", show=False),
        Binding("right", "choose(1)", "Next block", show=False),
    ]

    def __init__(self, meta: str, blocks: list[CodeBlock] | None = None) -> None:
        super().__init__(classes="meta")
        self.meta = meta
        self.blocks: list[CodeBlock] = []
        self.chosen = 0
        self.set_blocks(blocks or [])

    def set_meta(self, meta: str) -> None:
        self.meta = meta
        self.refresh(layout=True)

    def set_blocks(self, blocks: list[CodeBlock]) -> None:
        """The reply's code blocks (none while it streams)."""
        self.blocks, self.chosen = blocks, 0
        self.can_focus = bool(blocks)
        self.refresh(layout=True)

    def lines(self, width: int) -> list[list[int]]:
        """The blocks on each line of targets at `width`: as many whole labels as fit."""
        lines: list[list[int]] = []
        used = 0
        for number, block in enumerate(self.blocks):
            needed = len(block.label) + (len(GAP) if lines and lines[-1] else 0)
            if not lines or (lines[-1] and used + needed > width):
                lines.append([])
                used, needed = 0, len(block.label)
            lines[-1].append(number)
            used += needed
        return lines

    def meta_height(self, width: int) -> int:
        return len(Text(self.meta).wrap(self.app.console, max(1, width))) if self.meta else 1

    def compact(self, width: int) -> bool:
        """Whether the targets are one row that counts them (too many for a few rows)."""
        return len(self.lines(width)) > MOST_TARGET_ROWS

    def _compact_row(self) -> Text:
        chosen = self.blocks[self.chosen]
        return Text.assemble(
            f"⧉ {len(self.blocks):,} code blocks · y copies the next · here ←/→ and Enter: ",
            (f"{self.chosen + 1}: {chosen.label.removeprefix('⧉ ')}", "reverse")
            if self.has_focus
            else f"{self.chosen + 1}: {chosen.label.removeprefix('⧉ ')}",
        )

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self.compact(width):
            row = self._compact_row().wrap(self.app.console, max(1, width))
            return self.meta_height(width) + len(row)
        return self.meta_height(width) + len(self.lines(width))

    def render(self) -> Text:
        shown = Text(self.meta)
        if self.compact(self.size.width):
            return Text.assemble(shown, "\n", self._compact_row())
        for numbers in self.lines(self.size.width):
            shown.append("\n")
            for place, number in enumerate(numbers):
                chosen = number == self.chosen and self.has_focus
                shown.append(GAP if place else "")
                shown.append(self.blocks[number].label, style="reverse" if chosen else "")
        return shown

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def action_choose(self, step: int) -> None:
        if self.blocks:
            self.chosen = (self.chosen + step) % len(self.blocks)
            self.refresh()

    def action_copy(self) -> None:
        if self.blocks:
            self.post_message(copy_wanted(self.blocks, self.chosen))

    def at(self, x: int, y: int) -> int | None:
        """The block whose label is at (x, y), if one is."""
        lines = self.lines(self.size.width)
        row = y - self.meta_height(self.size.width)
        if self.compact(self.size.width):
            return self.chosen if row >= 0 else None  # the one row copies the block chosen
        if not 0 <= row < len(lines):
            return None
        start = 0
        for number in lines[row]:
            end = start + len(self.blocks[number].label)
            if start <= x < end:
                return number
            start = end + len(GAP)
        return None

    def on_click(self, event: Click) -> None:
        number = self.at(event.x, event.y)
        if number is not None:
            event.stop()
            self.chosen = number
            self.refresh()
            self.post_message(copy_wanted(self.blocks, number))
