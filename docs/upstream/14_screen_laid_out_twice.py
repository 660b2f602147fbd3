"""Screen: a screen just pushed is laid out again, at the size it was just laid out at.

A screen's first layout posts a Resize to every widget it showed, the screen itself among
them; the screen's Resize handler (`_screen_resized`) lays it out again whatever the size,
and every screen under it too. Pushing a screen of ~200 widgets costs a second layout.

Run: python 14_screen_laid_out_twice.py (plain Textual 8.2.8; no byok-tui).
Prints REPRODUCED when a Resize handler laid a screen out at the size it already had.
"""

from textual._compositor import Compositor
from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import Label

resizing = [False]  # inside a screen's Resize handler
again: list[str] = []  # screens laid out again there at the size they had
reflow, screen_resized = Compositor.reflow, Screen._screen_resized


def counted_reflow(self, parent, size):  # type: ignore[no-untyped-def]
    if resizing[0] and size == self.size:
        again.append(type(parent).__name__)
    return reflow(self, parent, size)


def tracked(self, size):  # type: ignore[no-untyped-def]
    resizing[0] = True
    try:
        screen_resized(self, size)
    finally:
        resizing[0] = False


Compositor.reflow = counted_reflow  # type: ignore[method-assign]
Screen._screen_resized = tracked  # type: ignore[method-assign]


class Many(Screen[None]):
    def compose(self) -> ComposeResult:
        for number in range(200):
            yield Label(f"row {number}")


async def main() -> str:
    app: App[None] = App()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        again.clear()
        await app.push_screen(Many())
        await pilot.pause(0.2)
    if again:
        return f"REPRODUCED: laid out again at the same size: {again}"
    return "NOT REPRODUCED: each screen laid out once"


if __name__ == "__main__":
    import asyncio

    print(asyncio.run(main()))
