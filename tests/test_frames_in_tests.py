"""The suite's own promise about drawing (tests/conftest.py, `frames_drawn_where_looked_at`):
a test that runs the app headless composes no frame unless it is marked `draws`, and still
draws the screen it leaves, so a widget that cannot draw what a test left fails that test."""

from __future__ import annotations

import pytest
from rich.console import RenderableType
from textual.app import App, ComposeResult
from textual.strip import Strip
from textual.widget import Widget

from byok_tui.compat import checked_version_installed


class Counted(Widget):
    """Counts the lines it is asked to draw; raises at any once it is `broken`."""

    DEFAULT_CSS = "Counted { height: 3; }"

    def __init__(self) -> None:
        super().__init__()
        self.lines_drawn = 0
        self.broken = False

    def render(self) -> RenderableType:
        return "drawn"

    def render_line(self, y: int) -> Strip:
        if self.broken:
            raise ArithmeticError("this widget cannot draw the state it was left in")
        self.lines_drawn += 1
        return super().render_line(y)


class OneWidget(App[None]):
    def compose(self) -> ComposeResult:
        yield Counted()


needs_the_checked_textual = pytest.mark.skipif(
    not checked_version_installed("textual"),
    reason="frames are left undrawn only on the Textual the harness was checked against",
)


@needs_the_checked_textual
async def test_a_test_not_marked_draws_composes_no_frame_but_draws_the_screen_it_leaves() -> None:
    app = OneWidget()
    async with app.run_test(size=(40, 5)) as pilot:
        counted = app.query_one(Counted)
        counted.refresh()
        await pilot.pause()
        drawn_by_frames = counted.lines_drawn
    assert drawn_by_frames == 0, "a headless frame was composed for a test not marked draws"
    assert counted.lines_drawn == 3, "the screen the test left was not drawn at its end"


@pytest.mark.draws
async def test_a_test_marked_draws_composes_its_frames() -> None:
    app = OneWidget()
    async with app.run_test(size=(40, 5)) as pilot:
        counted = app.query_one(Counted)
        await pilot.pause()
        first = counted.lines_drawn
        counted.refresh()
        await pilot.pause()
        assert first == 3, "the first frame was not drawn"
        assert counted.lines_drawn == 6, "a refresh drew no frame in a test marked draws"


@needs_the_checked_textual
async def test_a_widget_that_cannot_draw_the_state_a_test_left_fails_the_test() -> None:
    app = OneWidget()
    with pytest.raises(ArithmeticError, match="cannot draw"):
        async with app.run_test(size=(40, 5)) as pilot:
            app.query_one(Counted).broken = True
            await pilot.pause()
