"""Input and TextArea: a bound editing key (ctrl+u, backspace) is overtaken by the
characters typed after it when they arrive together (a fast typist, a loaded machine, a
paste without bracketed paste): the characters are inserted first and the key's action then
deletes them.

Run: python 29_editing_key_overtaken.py (plain Textual 8.2.8; no byok-tui).
Prints REPRODUCED when what is typed in one burst ends otherwise than typed one at a time.
"""

from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Input, TextArea

# What is typed, and what it leaves when each key is handled before the next arrives.
BURSTS = [
    (Input, ["x", "y", "ctrl+u", "a", "b"], "ab"),
    (Input, ["b", "a", "backspace", "c"], "bc"),
    (TextArea, ["b", "a", "backspace", "c"], "bc"),
]


class Typed(App[None]):
    def __init__(self, field: type[Input] | type[TextArea]) -> None:
        super().__init__()
        self.field = field

    def compose(self) -> ComposeResult:
        yield self.field()

    def on_mount(self) -> None:
        self.query_one(self.field).focus()


def key(name: str) -> events.Key:
    return events.Key(name, name if len(name) == 1 else None)


async def typed_in_one_burst(field: type[Input] | type[TextArea], keys: list[str]) -> str:
    app = Typed(field)
    async with app.run_test() as pilot:
        await pilot.pause()
        for name in keys:  # all read from the terminal at once: none handled yet
            app.post_message(key(name))
        await pilot.pause(0.2)
        widget = app.query_one(field)
        return widget.value if isinstance(widget, Input) else widget.text


async def main() -> str:
    wrong = []
    for field, keys, expected in BURSTS:
        got = await typed_in_one_burst(field, keys)
        if got != expected:
            wrong.append(f"{field.__name__} {keys} left {got!r}, not {expected!r}")
    if wrong:
        return "REPRODUCED: " + "; ".join(wrong)
    return "NOT REPRODUCED: every burst left what was typed"


if __name__ == "__main__":
    import asyncio

    print(asyncio.run(main()))
