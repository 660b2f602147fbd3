"""Footer: each key the footer composes is restyled twice more than its mounting.

`FooterKey.compact` starts True and `Footer.compact` False: each key adds the `-compact`
class as it is set up, then takes it off when bound to the footer's, and each change of
class restyles the key at once. A footer composes its keys anew at every change of bindings
(every change of focus).

Run: python 24_footer_key_restyled_twice.py (plain Textual 8.2.8; no byok-tui).
Prints REPRODUCED when a key composed at a change of focus is styled more than once.
"""

import asyncio
from collections import Counter

from textual.app import App, ComposeResult
from textual.css.stylesheet import Stylesheet
from textual.widgets import Footer, Input
from textual.widgets._footer import FooterKey


class TwoFields(App[None]):
    BINDINGS = [("ctrl+s", "save", "Save")]

    def compose(self) -> ComposeResult:
        yield Input(id="first")
        yield Input(id="second")
        yield Footer()

    def action_save(self) -> None:
        pass


async def styles_of_new_keys() -> list[int]:
    styled: Counter[object] = Counter()
    apply = Stylesheet.apply

    def counted(self, node, *args, **options):  # type: ignore[no-untyped-def]
        styled[node] += 1
        return apply(self, node, *args, **options)

    app = TwoFields()
    async with app.run_test() as pilot:
        await pilot.pause()
        before = set(app.query(FooterKey))
        Stylesheet.apply = counted  # type: ignore[method-assign]
        app.query_one("#second").focus()  # the bindings change: the footer composes anew
        for _ in range(5):
            await pilot.pause()
        Stylesheet.apply = apply  # type: ignore[method-assign]
        bound = [key for key in app.query(FooterKey) if key not in before]
        return [styled[key] for key in bound if not key.has_class("-command-palette")]


def main() -> str:
    counts = asyncio.run(styles_of_new_keys())
    if not counts:
        return "NOT REPRODUCED: the footer did not compose its keys anew"
    if max(counts) > 1:
        return f"REPRODUCED: a key the footer composed anew was styled {max(counts)} times"
    return "NOT REPRODUCED: each key the footer composed anew was styled once"


if __name__ == "__main__":
    print(main())
