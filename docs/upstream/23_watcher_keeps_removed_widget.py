"""Watchers: a widget that watched another object's attribute outlives its removal.

`DOMNode.watch` (and `data_bind`, which uses it) stores `(widget, callback)` on the object
watched; only a change of that attribute takes off the watchers of closed widgets. A footer's
keys, composed anew at each change of bindings and bound to the footer's `compact`, which
never changes, all stay alive with everything they hold. Reported upstream as
Textualize/textual#6666.

Run: python 23_watcher_keeps_removed_widget.py (plain Textual 8.2.8; no byok-tui).
Prints REPRODUCED when removed footer keys are still alive.
"""

import asyncio
import gc
import weakref

from textual.app import App, ComposeResult
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


async def alive_after_a_change_of_focus() -> tuple[int, int]:
    app = TwoFields()
    async with app.run_test() as pilot:
        await pilot.pause()
        keys = [weakref.ref(key) for key in app.query(FooterKey)]
        app.query_one("#second").focus()  # the bindings change: the footer composes anew
        for _ in range(5):
            await pilot.pause()
        gc.collect()
        gone = [ref for ref in keys if (key := ref()) is None or not key.is_attached]
        return sum(ref() is not None for ref in gone), len(gone)


def main() -> str:
    alive, removed = asyncio.run(alive_after_a_change_of_focus())
    if not removed:
        return "NOT REPRODUCED: the footer did not compose its keys anew"
    if alive:
        return f"REPRODUCED: {alive} of {removed} removed footer keys are still alive"
    return f"NOT REPRODUCED: the {removed} removed footer keys were freed"


if __name__ == "__main__":
    print(main())
