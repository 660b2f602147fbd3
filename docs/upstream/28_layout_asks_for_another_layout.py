"""Layout: a layout that sets a widget's virtual size asks for another layout.

`Widget._size_updated`, called by the screen's layout for every widget it placed, assigns
`virtual_size`, a reactive declared `layout=True`: each widget whose virtual size the layout
changed asks for a layout again, and the screen lays itself out a second time, finding
nothing to move. Showing a container of widgets takes two layouts where one did it all.

Run: python 28_layout_asks_for_another_layout.py (plain Textual 8.2.8; no byok-tui).
Prints REPRODUCED when showing a container of labels never shown before takes more than one
layout.
"""

import asyncio

from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Label


class Shown(App[None]):
    CSS = "#pane { width: 30; height: auto; display: none; } #pane > Label { width: 100%; }"

    def compose(self) -> ComposeResult:
        with Vertical(id="pane"):
            for number in range(6):
                yield Label(f"label {number}, long enough to wrap in a narrow pane")


async def layouts_to_show() -> tuple[int, int]:
    layouts: list[Screen[object]] = []
    refresh_layout = Screen._refresh_layout

    def counted(self: Screen[object], *args: object, **kwargs: object) -> None:
        layouts.append(self)
        refresh_layout(self, *args, **kwargs)  # type: ignore[arg-type]

    Screen._refresh_layout = counted  # type: ignore[method-assign]
    app = Shown()
    async with app.run_test() as pilot:
        pane = app.query_one("#pane")  # never shown yet: none of it has a size
        for _ in range(3):
            await pilot.pause()
        layouts.clear()
        pane.display = True
        for _ in range(5):
            await pilot.pause()
        shown = len(layouts)
        moved = dict((label, label.region) for label in pane.query(Label))
        app.screen.refresh(layout=True)
        for _ in range(3):
            await pilot.pause()
        changed = sum(label.region != region for label, region in moved.items())
        return shown, changed


def main() -> str:
    layouts, changed = asyncio.run(layouts_to_show())
    if layouts > 1:
        return f"REPRODUCED: showing the pane took {layouts} layouts"
    if changed:
        return f"REPRODUCED: one layout left {changed} labels where another moved them"
    return "NOT REPRODUCED: one layout showed the pane, and another moved nothing"


if __name__ == "__main__":
    print(main())
