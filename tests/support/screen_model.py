"""What a terminal would show after the frames an app wrote to it: each update's text laid
over a grid of cells, as the terminal lays it. A test compares it with a fresh drawing of the
whole screen to prove that no change was left undrawn."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions
from rich.segment import ControlType, Segment
from textual.strip import Strip


class ScreenModel:
    """The text of each cell of a `width` x `height` terminal (styles left out)."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.cells = [[" "] * width for _ in range(height)]

    def apply(self, update: object, console: Console, options: ConsoleOptions) -> None:
        """Lay the segments `update` (a compositor update) writes over the cells."""
        x = y = 0
        for segment in update.__rich_console__(console, options):  # type: ignore[attr-defined]
            if not isinstance(segment, Segment):
                continue
            if segment.control:
                for code in segment.control:
                    if code[0] == ControlType.CURSOR_MOVE_TO:
                        x, y = (int(value) for value in tuple(code)[1:3])
                continue
            if segment.text == "\n":
                continue
            for character in segment.text:
                if 0 <= y < self.height and 0 <= x < self.width:
                    self.cells[y][x] = character
                x += cell_len(character)

    def lines(self) -> list[str]:
        return ["".join(row) for row in self.cells]


def drawn_afresh(strips: list[Strip]) -> list[str]:
    """The text of each line of a whole screen drawn now."""
    return [strip.text for strip in strips]
