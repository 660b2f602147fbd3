"""A streamed reply looks exactly like the same reply rendered at once, while only its last
block is re-rendered as text arrives."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from textual.app import App, ComposeResult

from byok_tui.widgets.markdown_text import (
    SETTLE_CHARS,
    MarkdownLines,
    MarkdownText,
    render_markdown,
    split_finished,
)

BLOCKS = [
    "A paragraph with **bold**, `code` and a [link](https://example.com/docs).\n\n",
    "- first point\n- second point\n- third\n\n",
    "1. one\n2. two\n\n",
    "```python\ndef add(a, b):\n    return a + b\n```\n\n",
    "## A heading\n\n",
    "> quoted\n> text\n\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n",
    "Setext heading\n===\n\n",
    "---\n\n",
    "1. numbered\n\n   with a second paragraph\n2. item\n\n",
]

markdown_texts = st.lists(st.sampled_from(BLOCKS), max_size=12).map("".join) | st.text(
    alphabet="ab -*#`>|=\n1.", max_size=200
)


@given(markdown_texts)
def test_a_split_loses_nothing_and_falls_at_a_line_start(text: str) -> None:
    finished, live = split_finished(text)
    assert finished + live == text
    assert not finished or finished.endswith("\n")


def test_the_unfinished_last_block_is_never_frozen() -> None:
    finished, live = split_finished("One.\n\nTwo is still being writ")
    assert (finished, live) == ("One.\n\n", "Two is still being writ")
    # A line that may yet turn the paragraph above it into a heading stays with it.
    assert split_finished("Title\n=") == ("", "Title\n=")
    assert split_finished("```python\ncode\n\nmore code") == ("", "```python\ncode\n\nmore code")
    # A rule stays with the block after it (Rich draws no blank line between them).
    assert split_finished("One.\n\n---\n\nTwo") == ("One.\n\n", "---\n\nTwo")


class OneText(App[None]):
    def compose(self) -> ComposeResult:
        yield MarkdownText()


def drawn(widget: MarkdownText) -> list[str]:
    lines: list[str] = []
    for part in widget.query(MarkdownLines):
        if not part.display:
            continue
        lines += [part.render_line(y).text.rstrip() for y in range(part.size.height)]
    return lines


def rendered_at_once(text: str, width: int) -> list[str]:
    console = Console(width=width, color_system=None, legacy_windows=False)
    rendered = console.render_lines(render_markdown(text), pad=False)
    return ["".join(segment.text for segment in line).rstrip() for line in rendered]


@pytest.mark.parametrize("first", range(len(BLOCKS)))
async def test_streamed_in_pieces_it_draws_what_the_whole_reply_draws(first: int) -> None:
    # Starting from each kind of block puts each kind at a segment boundary.
    text = "".join((BLOCKS[first:] + BLOCKS[:first]) * 6)
    assert len(text) > 2 * SETTLE_CHARS
    app = OneText()
    async with app.run_test(size=(70, 40)) as pilot:
        widget = app.query_one(MarkdownText)
        for start in range(0, len(text), 37):
            widget.append(text[start : start + 37])
        await pilot.pause()
        frozen = widget.query(".frozen")
        assert len(frozen) >= 2, "finished blocks were frozen into segments"
        assert len(widget.query_one(".live", MarkdownLines).text) < SETTLE_CHARS + 200
        assert widget.text == text
        assert drawn(widget) == rendered_at_once(text, widget.size.width)
