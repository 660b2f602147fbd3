"""OptionList: PageDown raises KeyError when the list has had no room to lay out its lines.

Run: python 08_option_list_page_keys.py (plain Textual 8.2.8; no byok-tui).
Prints REPRODUCED when the key press crashes the app.
"""

from textual.app import App, ComposeResult
from textual.widgets import OptionList


class NoRoom(App[None]):
    CSS = "OptionList { height: 0; }"  # a terminal too short for the list: no lines made

    def compose(self) -> ComposeResult:
        yield OptionList(*[f"option {number}" for number in range(20)])

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = 3
        options.focus()


async def main() -> str:
    app = NoRoom()
    try:
        async with app.run_test(size=(40, 5)) as pilot:
            await pilot.pause()
            await pilot.press("pagedown")
            await pilot.pause()
    except KeyError as error:
        return f"REPRODUCED: PageDown raised KeyError({error})"
    return "NOT REPRODUCED: PageDown did nothing"


if __name__ == "__main__":
    import asyncio

    print(asyncio.run(main()))
