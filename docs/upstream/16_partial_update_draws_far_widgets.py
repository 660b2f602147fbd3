"""Compositor: a partial update draws every widget whose container overlaps it.

`Compositor._get_renders`, given a crop (the part of the screen that changed), picks the
widgets to draw by their clip (their container's visible area), not by their own visible
part: a key typed into an Input draws the header, the sidebar and the footer too, lines
that are thrown away after.

Run: python 16_partial_update_draws_far_widgets.py (plain Textual 8.2.8; no byok-tui).
Prints REPRODUCED when a key typed drew widgets that do not touch the Input.
"""

from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Footer, Header, Input, Static

drawn: list[str] = []
render_lines = Widget.render_lines


def counted(self, crop):  # type: ignore[no-untyped-def]
    drawn.append(self.id or type(self).__name__)
    return render_lines(self, crop)


Widget.render_lines = counted  # type: ignore[method-assign]


class Chat(App[None]):
    CSS = "#sidebar { width: 30; } #transcript { height: 1fr; }"

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            yield Static("conversations", id="sidebar")
            with Vertical():
                yield Static("the transcript", id="transcript")
                yield Input(id="composer")
        yield Footer()


async def main() -> str:
    app = Chat()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.5)
        drawn.clear()
        await pilot.press("x")
        await pilot.pause()
    far = sorted({name for name in drawn if name in ("Header", "Footer", "sidebar")})
    if far:
        return f"REPRODUCED: a key typed into the Input drew {far}"
    return "NOT REPRODUCED: a key typed drew only what it changed"


if __name__ == "__main__":
    import asyncio

    print(asyncio.run(main()))
