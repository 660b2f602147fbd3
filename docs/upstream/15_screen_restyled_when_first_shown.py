"""Screen: a screen pushed for the first time restyles every widget it has just styled.

Each widget is styled as it is mounted; the screen's first ScreenResume then restyles the
whole screen (`refresh_styles=True`) though the app's styles have not changed since its
compose. Pushing a screen of ~200 widgets styles each of them twice.

Run: python 15_screen_restyled_when_first_shown.py (plain Textual 8.2.8; no byok-tui).
Prints REPRODUCED when a widget of a screen just pushed was styled more than once.
"""

from textual.app import App, ComposeResult
from textual.css.stylesheet import Stylesheet
from textual.screen import Screen
from textual.widgets import Label

styled: dict[int, int] = {}
apply = Stylesheet.apply


def counted(self, node, *args, **kwargs):  # type: ignore[no-untyped-def]
    styled[id(node)] = styled.get(id(node), 0) + 1
    apply(self, node, *args, **kwargs)


Stylesheet.apply = counted  # type: ignore[method-assign]


class Many(Screen[None]):
    def compose(self) -> ComposeResult:
        for number in range(200):
            yield Label(f"row {number}", classes="row")


async def main() -> str:
    app: App[None] = App()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        styled.clear()
        await app.push_screen(Many())
        await pilot.pause(0.2)
        rows = list(app.screen.query(".row"))
        counts = sorted({styled.get(id(row), 0) for row in rows})
    if max(counts) > 1:
        return f"REPRODUCED: each of {len(rows)} rows styled {counts} times"
    return f"NOT REPRODUCED: each of {len(rows)} rows styled once"


if __name__ == "__main__":
    import asyncio

    print(asyncio.run(main()))
