"""What the app has written to each cell of the terminal, so that a frame writes only the cells
it changes (byok_tui/compat.py, point 30, reads each piece of a frame into characters and
styles and writes what this says changed).

Textual writes every line of every region it repaints, changed or not: while a reply streamed
in tmux, 78 % of the runs of text it wrote (47 % of the cells) rewrote what the terminal
already showed (the reply's lines above the one growing, its blank lines below, its figures
line, each frame). Here each cell keeps the character and the style last written to it, and
a piece of a frame is cut to the cells from its first change to its last, or left out.

A cell is known only once written by a piece whose every character is one cell wide; any
other piece (a wide or combining character, a control) is written whole and its cells
forgotten, so that a misjudged width never leaves a stale cell on screen. Everything is
forgotten whenever the terminal may show something else (compat.py: a new size, application
mode started again, anything written but these pieces). Knows nothing of Textual or Rich: a
style is any value that compares equal to itself.
"""

from __future__ import annotations

from collections.abc import Callable

UNKNOWN = "\0"  # a cell not known: never equal to a character a piece writes


class WrittenCells:
    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self._text: list[str] = []
        self._styles: list[list[object]] = []
        self.forget()

    def forget(self) -> None:
        """The terminal may show anything now: every cell is written again."""
        self._text = [UNKNOWN * self.width for _ in range(self.height)]
        self._styles = [[None] * self.width for _ in range(self.height)]

    def changed(
        self, x: int, y: int, text: str | None, styles: list[object], width: int
    ) -> tuple[int, int] | None:
        """Of a piece `width` cells wide to be written at (`x`, `y`), its characters `text`
        (one a cell) and each cell's style, which cells change the terminal: the offsets
        from its first changed cell to just past its last, or None if it changes none. The
        piece is taken as written. `text` None (a character not one cell wide): all of it,
        its cells no longer known."""
        if not 0 <= y < self.height or x < 0:
            return 0, width
        if text is None or len(text) != width or x + width > self.width:
            self._forget_span(y, x, width)
            return 0, width
        old_text, old_styles = self._text[y][x : x + width], self._styles[y][x : x + width]
        if old_text == text and old_styles == styles:
            return None
        line = self._text[y]
        self._text[y] = line[:x] + text + line[x + width :]
        self._styles[y][x : x + width] = styles
        start = _same_first(text, styles, old_text, old_styles)
        return start, width - _same_last(text, styles, old_text, old_styles, width - start)

    def _forget_span(self, y: int, x: int, width: int) -> None:
        end = min(x + width, self.width)
        if 0 <= y < self.height and x < end:
            line = self._text[y]
            self._text[y] = line[:x] + UNKNOWN * (end - x) + line[end:]
            self._styles[y][x:end] = [None] * (end - x)


def _same_first(text: str, styles: list[object], old: str, old_styles: list[object]) -> int:
    """How many cells at the start are unchanged."""
    return _longest(len(text), lambda n: text[:n] == old[:n] and styles[:n] == old_styles[:n])


def _same_last(
    text: str, styles: list[object], old: str, old_styles: list[object], most: int
) -> int:
    """How many cells at the end are unchanged, at most `most`."""
    end = len(text)
    return _longest(
        most,
        lambda n: text[end - n :] == old[end - n :] and styles[end - n :] == old_styles[end - n :],
    )


def _longest(most: int, holds: Callable[[int], bool]) -> int:
    """The largest n <= `most` for which `holds(n)`, `holds` true up to some n and false after
    (a binary search of slices: each compare runs in C)."""
    low, high = 0, most
    while low < high:
        middle = (low + high + 1) // 2
        if holds(middle):
            low = middle
        else:
            high = middle - 1
    return low
