"""The benchmarks count the runs of text a program wrote to a terminal that changed nothing on
screen (benchmarks/terminal_writes.py): the count must see a line written again as it was,
and never call a change, of a character or of a colour alone, no change."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from benchmarks.terminal_writes import rewrites

SIZE = (20, 5)


def at(row: int, column: int) -> str:
    return f"\x1b[{row + 1};{column + 1}H"


def test_a_line_written_again_as_it_was_is_one_unchanged_run() -> None:
    found = rewrites(f"{at(0, 0)}hello{at(0, 0)}hello".encode(), SIZE)
    assert (found.runs, found.judged, found.unchanged) == (2, 1, 1)
    assert (found.cells, found.unchanged_cells) == (5, 5)


def test_one_character_changed_makes_the_run_a_change() -> None:
    found = rewrites(f"{at(0, 0)}hello{at(0, 0)}hellO".encode(), SIZE)
    assert (found.judged, found.unchanged, found.unchanged_cells) == (1, 0, 4)


def test_a_colour_changed_alone_is_a_change() -> None:
    red, blue = "\x1b[0m\x1b[38;2;255;0;0m", "\x1b[0m\x1b[38;2;0;0;255m"
    found = rewrites(f"{at(1, 2)}{red}ab{at(1, 2)}{blue}ab".encode(), SIZE)
    assert (found.judged, found.unchanged) == (1, 0)
    same = rewrites(f"{at(1, 2)}{red}ab{at(1, 2)}{red}ab".encode(), SIZE)
    assert (same.judged, same.unchanged) == (1, 1)


def test_cells_not_written_before_in_the_stream_are_not_judged() -> None:
    """What the screen showed before the recording is not known: a run over a cell never
    written in the stream is counted, not judged."""
    found = rewrites(f"{at(0, 0)}ab{at(0, 0)}abc{at(3, 0)}x".encode(), SIZE)
    assert (found.runs, found.judged) == (3, 0)


def test_modes_and_hyperlinks_between_writes_change_no_cell() -> None:
    written = f"\x1b[?2026h{at(2, 0)}same\x1b[?25l\x1b]8;;https://x.example\x1b\\{at(2, 0)}same"
    found = rewrites(written.encode(), SIZE)
    assert (found.judged, found.unchanged) == (1, 1)


def test_a_wide_character_takes_two_cells() -> None:
    found = rewrites(f"{at(0, 0)}日x{at(0, 0)}日x".encode(), SIZE)
    assert (found.cells, found.unchanged) == (3, 1)
    moved = rewrites(f"{at(0, 0)}日x{at(0, 0)}xx日".encode(), SIZE)
    assert moved.unchanged == 0


def test_an_erased_line_written_again_is_a_change() -> None:
    found = rewrites(f"{at(0, 0)}abc{at(0, 0)}\x1b[2K{at(0, 0)}abc".encode(), SIZE)
    assert (found.judged, found.unchanged) == (1, 0)


@given(
    line=st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=20),
    changed=st.integers(0, 19),
)
def test_a_run_is_unchanged_exactly_when_its_text_is_the_same(line: str, changed: int) -> None:
    other = list(line)
    other[changed % len(line)] = "~" if other[changed % len(line)] != "~" else "!"
    for again, unchanged in ((line, 1), ("".join(other), 0)):
        found = rewrites(f"{at(4, 0)}{line}{at(4, 0)}{again}".encode(), SIZE)
        assert (found.judged, found.unchanged) == (1, unchanged)
