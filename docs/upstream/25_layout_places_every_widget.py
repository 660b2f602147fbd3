"""Screen: a layout whose changes all lie inside one fixed-size container places every widget.

A widget that grows (an auto-height text in a scrolling pane) asks for a layout; Textual's
`_on_layout` walks up from it only to the first ancestor whose size does not follow its
content, and clears the arrangements it kept only up to there. Yet `Compositor.reflow`
places every widget of the screen again: here a side panel of 60 widgets, at every line the
text gains, for a change that can only move what is inside the pane.

Run: python 25_layout_places_every_widget.py (plain Textual 8.2.8; no byok-tui).
Prints REPRODUCED when a layout of the pane alone arranged the side panel again.
"""

from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

arranged: list[str] = []  # the containers arranged since the text last grew
arrange = Widget.arrange


def counted_arrange(self, *args, **kwargs):  # type: ignore[no-untyped-def]
    arranged.append(self.id or type(self).__name__)
    return arrange(self, *args, **kwargs)


Widget.arrange = counted_arrange  # type: ignore[method-assign]


class Growing(App[None]):
    CSS = "#panel { width: 30; } #pane { width: 1fr; } #text { height: auto; }"

    def compose(self) -> ComposeResult:
        with Horizontal():
            with Vertical(id="panel"):
                for number in range(60):
                    yield Static(f"item {number}")
            with VerticalScroll(id="pane"):
                yield Static("line 0", id="text")


async def main() -> str:
    app = Growing()
    again = 0
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        text = app.query_one("#text", Static)
        for lines in range(2, 12):
            arranged.clear()
            text.update("\n".join(f"line {n}" for n in range(lines)))
            await pilot.pause()
            again += "panel" in arranged
    if again:
        return f"REPRODUCED: {again} of 10 layouts of the pane arranged the side panel again"
    return "NOT REPRODUCED: each layout of the pane arranged the pane alone"


if __name__ == "__main__":
    import asyncio

    print(asyncio.run(main()))
