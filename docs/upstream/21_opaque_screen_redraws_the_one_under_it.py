"""App: a screen under an opaque screen is still laid out and drawn, and redraws the top one.

`App._background_screens` lists the screen just under the top one whatever the top screen's
background: it checks the opacity of the screens under, not of the top one. That screen
stays `is_current`: each change on it is laid out and drawn, and the regions it drew are
drawn again on the top screen, though none of it can be seen.

Run: python 21_opaque_screen_redraws_the_one_under_it.py (plain Textual 8.2.8; no byok-tui).
Prints REPRODUCED when a change on the hidden screen drew widgets of the screen on top.
"""

from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Label, Static

drawn: list[str] = []
render_lines = Widget.render_lines


def counted(self, crop):  # type: ignore[no-untyped-def]
    drawn.append(self.id or type(self).__name__)
    return render_lines(self, crop)


Widget.render_lines = counted  # type: ignore[method-assign]


class Top(Screen[None]):
    """An ordinary screen: its background ($background) is opaque."""

    def compose(self) -> ComposeResult:
        yield Static("on top, covering everything", id="top")


class Under(App[None]):
    def compose(self) -> ComposeResult:
        yield Label("under", id="under")


async def main() -> str:
    app = Under()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.push_screen(Top())
        await pilot.pause(0.3)
        drawn.clear()
        for number in range(5):
            app.query_one("#under", Label).update(f"changed {number}")  # the hidden screen
            await pilot.pause(0.05)
        await pilot.pause(0.2)
    seen = sorted(set(drawn))
    if seen:
        return f"REPRODUCED: changes under an opaque screen drew {seen}"
    return "NOT REPRODUCED: a screen under an opaque one is left alone"


if __name__ == "__main__":
    import asyncio

    print(asyncio.run(main()))
