"""Screen: a screen under another, with two old sizes queued, resizes back and forth for ever.

Dragging a terminal's edge queues Resize events; a screen lays itself out at the size of
each one and, when that changed its size, posts itself a Resize of its own. While layouts
wait (`App.batch_update`, as during shutdown) a refresh is queued between them, so a screen
under another that had two old sizes queued goes from one to the other for ever, at 100% CPU
(ctrl+q after dragging the edge hung the app).

Run: python 07_screen_resize_loop.py (plain Textual 8.2.8; no byok-tui).
Prints REPRODUCED when the screen has handled the old sizes more than 20 times.
"""

from textual.app import App, ComposeResult
from textual.events import Resize
from textual.geometry import Size
from textual.screen import Screen
from textual.widgets import Static

OLD_SIZES = (Size(100, 30), Size(90, 25))  # what a dragged edge left queued


class Over(Screen[None]):
    def compose(self) -> ComposeResult:
        yield Static("the screen on top")


class Under(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("the screen underneath")


async def main() -> str:
    handled: list[Size] = []

    def count(message: object) -> None:
        if isinstance(message, Resize) and message.size in OLD_SIZES:
            handled.append(message.size)
            if len(handled) > 20:
                raise RuntimeError("stop")  # the loop would never end by itself

    app = Under()
    try:
        async with app.run_test(size=(140, 40), message_hook=count) as pilot:
            await app.push_screen(Over())
            await pilot.pause()
            under = app.screen_stack[-2]
            with app.batch_update():  # layouts wait, as while the app shuts down
                for old in OLD_SIZES:
                    under.post_message(Resize(old, old))
                    under.call_later(lambda: None)
                await pilot.pause(0.3)
            await pilot.pause(0.3)
    except RuntimeError:
        pass
    if len(handled) > 20:
        return f"REPRODUCED: the screen underneath resized {len(handled)} times: {handled[-4:]}"
    return f"NOT REPRODUCED: the old sizes were handled {len(handled)} times"


if __name__ == "__main__":
    import asyncio

    print(asyncio.run(main()))
