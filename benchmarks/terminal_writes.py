"""What a program's writes to a terminal changed on screen: each run of text (the cells written
from one cursor position to the next move) laid over a grid of cells, as a terminal lays them,
and compared with what those cells already showed. A run that leaves every one of its cells
as it was rewrote what had not changed: bytes the terminal parsed for nothing.

Only cells written earlier in the same stream are judged: what the screen showed before the
recording began is not known here. A cell is its character and the SGR parameters in force
when it was written (since the last reset), so a change of colour alone is a change. Reads
the stream as Textual writes it: cursor moves by position (CUP), SGR, erasures, and modes and
OSC sequences, which change no cell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.cells import get_character_cell_size

Cell = tuple[str, str]  # the character, the SGR parameters in force

# A CSI sequence, an OSC one (ended by BEL or ST), any other escape, or one character.
_TOKEN = re.compile(
    r"\x1b\[(?P<csi>[0-?]*)[ -/]*(?P<final>[@-~])"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
    r"|\x1b[ -/]*[0-~]"
    r"|(?P<char>[^\x1b])",
    re.DOTALL,
)


@dataclass
class Rewrites:
    """The runs of text a stream wrote, and those that changed nothing on screen."""

    runs: int = 0
    """Runs of text written, each from a cursor position to the next move."""
    judged: int = 0
    """Runs all of whose cells the stream had written before (the others are not judged)."""
    unchanged: int = 0
    """Judged runs that left every one of their cells as it was."""
    cells: int = 0
    """Cells written by the judged runs."""
    unchanged_cells: int = 0
    """Of those, cells written with what they already showed."""

    def said(self) -> str:
        share = self.unchanged_cells / self.cells if self.cells else 0.0
        return (
            f"{self.unchanged:,} of {self.judged:,} runs rewritten unchanged"
            f" ({share:.0%} of {self.cells:,} cells)"
        )


class _Grid:
    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.cells: dict[tuple[int, int], Cell] = {}  # only cells written so far
        self.row = self.column = 0
        self.style = ""
        self.found = Rewrites()
        self._run: list[bool | None] | None = None  # each cell of the run: the same (None: unknown)

    def end_run(self) -> None:
        run, self._run = self._run, None
        if not run:
            return
        self.found.runs += 1
        if None in run:
            return
        self.found.judged += 1
        self.found.cells += len(run)
        same = sum(1 for cell in run if cell)
        self.found.unchanged_cells += same
        if same == len(run):
            self.found.unchanged += 1

    def move(self, row: int, column: int) -> None:
        self.end_run()
        self.row = min(max(row, 0), self.height - 1)
        self.column = min(max(column, 0), self.width - 1)

    def put(self, character: str) -> None:
        width = get_character_cell_size(character)
        if width == 0:
            return  # a combining mark rides on the cell before it
        if self._run is None:
            self._run = []
        for offset, text in ((0, character), (1, ""))[:width]:
            where = (self.row, self.column + offset)
            if where[1] >= self.width:
                break
            before = self.cells.get(where)
            self.cells[where] = (text, self.style)
            self._run.append(None if before is None else before == (text, self.style))
        self.column = min(self.column + width, self.width - 1)

    def erase(self, cells: list[tuple[int, int]]) -> None:
        self.end_run()
        for where in cells:
            self.cells[where] = (" ", self.style)

    def csi(self, parameters: str, final: str) -> None:
        numbers = [int(p) if p.isdigit() else 0 for p in parameters.split(";")]
        first = numbers[0] or 1
        if parameters.startswith("?") or final in "hlnqt":
            return  # a mode, a report, a title: no cell changes
        if final == "m":
            self.sgr(parameters)
        elif final in "Hf":
            column = numbers[1] if len(numbers) > 1 and numbers[1] else 1
            self.move(first - 1, column - 1)
        elif final in "ABCD":
            steps = {"A": (-first, 0), "B": (first, 0), "C": (0, first), "D": (0, -first)}
            down, right = steps[final]
            self.move(self.row + down, self.column + right)
        elif final == "G":
            self.move(self.row, first - 1)
        elif final == "d":
            self.move(first - 1, self.column)
        elif final == "K":
            start, end = {0: (self.column, self.width), 1: (0, self.column + 1)}.get(
                numbers[0], (0, self.width)
            )
            self.erase([(self.row, column) for column in range(start, end)])
        elif final == "J" and numbers[0] == 2:
            self.erase([(r, c) for r in range(self.height) for c in range(self.width)])
        else:
            self.end_run()  # something not modelled: no run spans it

    def sgr(self, parameters: str) -> None:
        for i, parameter in enumerate(parameters.split(";")):
            if parameter in ("", "0"):
                self.style = ""
            else:
                self.style = f"{self.style};{';'.join(parameters.split(';')[i:])}".lstrip(";")
                return


def rewrites(written: bytes, size: tuple[int, int]) -> Rewrites:
    """The runs of text `written` (a program's output to a terminal of `size`) wrote, and how
    many of those over cells it had written before left them as they were."""
    width, height = size
    grid = _Grid(width, height)
    for token in _TOKEN.finditer(written.decode("utf-8", errors="replace")):
        character = token["char"]
        if character is None:
            if token["final"] is not None:
                grid.csi(token["csi"], token["final"])
            continue
        if character == "\r":
            grid.move(grid.row, 0)
        elif character == "\n":
            grid.move(grid.row + 1, grid.column)
        elif character == "\b":
            grid.move(grid.row, grid.column - 1)
        elif character >= " ":
            grid.put(character)
    grid.end_run()
    return grid.found


def rewritten_runs(recordings: list[bytes], size: tuple[int, int]) -> Rewrites:
    """The runs of text several recordings wrote (each judged on its own), added up."""
    total = Rewrites()
    for recorded in recordings:
        found = rewrites(recorded, size)
        total.runs += found.runs
        total.judged += found.judged
        total.unchanged += found.unchanged
        total.cells += found.cells
        total.unchanged_cells += found.unchanged_cells
    return total
