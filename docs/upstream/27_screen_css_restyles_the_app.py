"""Screens: a screen whose CSS is new parses every stylesheet again and restyles every widget.

`App._load_screen_css` reads a screen's CSS the first time the screen is pushed, then calls
`Stylesheet.reparse`, which parses every source again in a fresh stylesheet (none from the
cache of what was parsed), and `Stylesheet.update(app)`, which restyles every widget of the
app, though the new rules name none of them.

Run: python 27_screen_css_restyles_the_app.py (plain Textual 8.2.8; no byok-tui).
Prints REPRODUCED when pushing the screen parses a stylesheet again or restyles a widget of
the screen under it that its CSS does not name.
"""

import asyncio

from textual.app import App, ComposeResult
from textual.css import stylesheet as stylesheets
from textual.css.stylesheet import Stylesheet
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widgets import Label


class Other(Screen[None]):
    CSS = "#other { color: red; }"

    def compose(self) -> ComposeResult:
        yield Label("other", id="other")


class Rows(App[None]):
    def compose(self) -> ComposeResult:
        for number in range(50):
            yield Label(f"row {number}")


async def parsed_and_restyled() -> tuple[int, int]:
    styled: list[DOMNode] = []
    parsed: list[object] = []
    apply, parse = Stylesheet.apply, stylesheets.parse

    def counted(self: Stylesheet, node: DOMNode, **kwargs: object) -> None:
        styled.append(node)
        apply(self, node, **kwargs)  # type: ignore[arg-type]

    def counted_parse(scope: str, css: str, read_from: object, **kwargs: object) -> object:
        parsed.append(read_from)
        return parse(scope, css, read_from, **kwargs)  # type: ignore[arg-type]

    Stylesheet.apply = counted  # type: ignore[method-assign]
    stylesheets.parse = counted_parse  # type: ignore[assignment]
    app = Rows()
    async with app.run_test() as pilot:
        await pilot.pause()
        rows = set(app.screen.query(Label))
        known = dict(app.stylesheet.source)
        styled.clear()
        parsed.clear()
        await app.push_screen(Other())
        await pilot.pause()
        sources = app.stylesheet.source  # parsed though unchanged (a tie-breaker may change)
        again = sum(known.get(place) == sources.get(place) for place in parsed)
        return again, sum(node in rows for node in styled)


def main() -> str:
    again, restyled = asyncio.run(parsed_and_restyled())
    if again or restyled:
        return (
            f"REPRODUCED: {again} stylesheets parsed again, {restyled} of 50 rows restyled "
            "by a screen's CSS that names none of them"
        )
    return "NOT REPRODUCED: only the new CSS was parsed, and no row restyled"


if __name__ == "__main__":
    print(main())
