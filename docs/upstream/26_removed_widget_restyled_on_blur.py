"""Focus: a widget being removed is restyled, with all it holds, as it loses the focus.

Removing widgets takes the focus off the focused one among them, and `Widget.watch_has_focus`
restyles that widget and everything in it, though none of it is drawn again. A screen whose
scroll area holds the focus restyles all its widgets as it is closed.

Run: python 26_removed_widget_restyled_on_blur.py (plain Textual 8.2.8; no byok-tui).
Prints REPRODUCED when a widget of the closed screen is styled after the screen is popped.
"""

import asyncio

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.css.stylesheet import Stylesheet
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widgets import Label


class Rows(Screen[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll(id="rows"):
            for number in range(100):
                yield Label(f"row {number}")


class Closing(App[None]):
    pass


async def styled_after_closing() -> tuple[int, int]:
    styled: list[DOMNode] = []
    apply = Stylesheet.apply

    def counted(self: Stylesheet, node: DOMNode, **kwargs: object) -> None:
        styled.append(node)
        apply(self, node, **kwargs)  # type: ignore[arg-type]

    Stylesheet.apply = counted  # type: ignore[method-assign]
    app = Closing()
    async with app.run_test() as pilot:
        screen = Rows()
        await app.push_screen(screen)
        screen.query_one("#rows").focus()
        await pilot.pause()
        held = set(screen.query("*"))
        styled.clear()
        await app.pop_screen()
        for _ in range(5):
            await pilot.pause()
        return sum(node in held for node in styled), len(held)


def main() -> str:
    restyled, held = asyncio.run(styled_after_closing())
    if restyled:
        return f"REPRODUCED: {restyled} of the closed screen's {held} widgets styled again"
    return f"NOT REPRODUCED: none of the closed screen's {held} widgets styled again"


if __name__ == "__main__":
    print(main())
