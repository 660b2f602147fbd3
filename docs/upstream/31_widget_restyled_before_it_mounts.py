"""A class set on a widget the app does not hold yet restyles it against the whole stylesheet.

`DOMNode.update_node_styles`, which every change of class calls, restyles the node at once
whether or not it is in the app; a widget is styled whole as it mounts anyway. Textual's own
widgets set a class as they are made: `Button(compact=True)` is styled three times where
once would do (its variant's class, its compact class, then its mounting).

Run: python 31_widget_restyled_before_it_mounts.py (plain Textual 8.2.8; no byok-tui).
Prints REPRODUCED when a compact Button is styled more than once as it is made and mounted.
"""

import asyncio
from collections import Counter

from textual.app import App
from textual.css.stylesheet import Stylesheet
from textual.widgets import Button


async def styles_of_a_new_button() -> int:
    styled: Counter[object] = Counter()
    apply = Stylesheet.apply

    def counted(self, node, *args, **options):  # type: ignore[no-untyped-def]
        styled[node] += 1
        return apply(self, node, *args, **options)

    app = App[None]()
    async with app.run_test() as pilot:
        Stylesheet.apply = counted  # type: ignore[method-assign]
        button = Button("Save", compact=True)
        await app.screen.mount(button)
        await pilot.pause()
        Stylesheet.apply = apply  # type: ignore[method-assign]
        return styled[button]


def main() -> str:
    count = asyncio.run(styles_of_a_new_button())
    if count > 1:
        return f"REPRODUCED: a compact Button was styled {count} times as it was made and mounted"
    return "NOT REPRODUCED: a compact Button was styled once, as it mounted"


if __name__ == "__main__":
    print(main())
