"""A frame writes only the cells it changes (byok_tui/core/written_cells.py): a piece of a
frame that changes nothing is left out, one that changes some cells is cut to them, and a
piece whose characters' widths are not sure is always written whole."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from byok_tui.core.written_cells import WrittenCells


def write(cells: WrittenCells, x: int, y: int, text: str, style: str = "red") -> str | None:
    """What of `text` is written, at its column: "4:MODEL", or None for nothing."""
    changed = cells.changed(x, y, text, [style] * len(text), len(text))
    return None if changed is None else f"{x + changed[0]}:{text[changed[0] : changed[1]]}"


def test_a_piece_written_again_as_it_was_is_left_out() -> None:
    cells = WrittenCells(20, 3)
    assert write(cells, 2, 1, "hello") == "2:hello"  # cells not written yet
    assert write(cells, 2, 1, "hello") is None


def test_a_changed_piece_is_cut_to_its_first_and_last_changed_cells() -> None:
    cells = WrittenCells(20, 3)
    write(cells, 0, 0, "the model streams")
    assert write(cells, 0, 0, "the MODEL streams") == "4:MODEL"
    assert write(cells, 0, 0, "the MODEL streams", "blue") == "0:the MODEL streams"  # colour


def test_cells_not_written_yet_are_written() -> None:
    cells = WrittenCells(20, 3)
    write(cells, 0, 2, "abc")
    assert write(cells, 0, 2, "abcdef") == "3:def"


def test_a_piece_of_uncertain_widths_is_written_whole_and_its_cells_forgotten() -> None:
    cells = WrittenCells(20, 3)
    write(cells, 0, 0, "abcd")
    assert cells.changed(0, 0, None, [], 4) == (0, 4)  # a wide character, say
    assert cells.changed(0, 0, None, [], 4) == (0, 4), "its width is the terminal's"
    assert write(cells, 0, 0, "abcd") == "0:abcd", "the cells under it are not known"


def test_forgotten_cells_are_written_again() -> None:
    cells = WrittenCells(20, 3)
    write(cells, 5, 1, "same")
    cells.forget()
    assert write(cells, 5, 1, "same") == "5:same"


def test_a_piece_past_the_right_edge_is_written_as_it_is() -> None:
    cells = WrittenCells(10, 2)
    assert write(cells, 8, 0, "wider") == "8:wider"
    assert write(cells, 8, 0, "wider") == "8:wider"


@given(
    writes=st.lists(
        st.tuples(
            st.integers(0, 14),
            st.integers(0, 2),
            st.text(st.sampled_from("ab -"), min_size=1, max_size=6),
            st.sampled_from(["red", "blue"]),
        ),
        max_size=30,
    )
)
def test_the_cells_written_are_what_writing_every_piece_whole_leaves(
    writes: list[tuple[int, int, str, str]],
) -> None:
    """Whatever pieces come, in whatever order: a terminal given only the changes shows what
    one given every piece whole shows."""
    cells = WrittenCells(20, 3)
    whole = [[(" ", "")] * 20 for _ in range(3)]
    given_changes = [[(" ", "")] * 20 for _ in range(3)]
    for x, y, text, style in writes:
        for offset, character in enumerate(text):
            whole[y][x + offset] = (character, style)
        changed = cells.changed(x, y, text, [style] * len(text), len(text))
        if changed is not None:
            for offset in range(*changed):
                given_changes[y][x + offset] = (text[offset], style)
    assert given_changes == whole
