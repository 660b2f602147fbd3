"""Compositor: a layout makes the whole map but leaves it marked stale, so it is made twice.

`Compositor.reflow` makes the full map (`_arrange_root(..., visible_only=False)`) without
clearing `_full_map_invalidated`, which a scroll set; the first place asked for after the
layout in the same frame (a scrollbar moved, a size read while drawing) makes it all again.

Run: python 13_layout_leaves_map_stale.py (plain Textual 8.2.8; no byok-tui).
Prints REPRODUCED when a layout placed every widget a second time.
"""

from textual._compositor import Compositor
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

placed: list[str] = []  # in the layout in progress
twice: list[int] = []  # layouts after which the whole map was made again
arrange_root, reflow, refresh_layout = (
    Compositor._arrange_root,
    Compositor.reflow,
    Screen._refresh_layout,
)


def counted_arrange(self, *args, **kwargs):  # type: ignore[no-untyped-def]
    if not kwargs.get("visible_only", args[2] if len(args) > 2 else True):
        placed.append("whole map")
    return arrange_root(self, *args, **kwargs)


def counted_reflow(self, *args):  # type: ignore[no-untyped-def]
    result = reflow(self, *args)
    placed.append("layout")
    return result


def counted_layout(self, *args, **kwargs):  # type: ignore[no-untyped-def]
    placed.clear()
    refresh_layout(self, *args, **kwargs)
    if "layout" in placed and "whole map" in placed[placed.index("layout") :]:
        twice.append(1)


Compositor._arrange_root = counted_arrange  # type: ignore[method-assign]
Compositor.reflow = counted_reflow  # type: ignore[method-assign]
Screen._refresh_layout = counted_layout  # type: ignore[method-assign]


class Long(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            for number in range(80):
                yield Static(f"line {number}\nof two", id=f"line{number}")


async def main() -> str:
    app = Long()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        twice.clear()
        scroll = app.query_one(VerticalScroll)
        for number in range(5):
            scroll.scroll_end(animate=False)  # marks the map stale
            app.query_one(f"#line{number}", Static).update(f"line {number}\nnow\nof three")
            await pilot.pause()
            scroll.scroll_home(animate=False)
            await pilot.pause()
    if twice:
        return f"REPRODUCED: {len(twice)} layouts made the whole map twice"
    return "NOT REPRODUCED: each layout made the whole map once"


if __name__ == "__main__":
    import asyncio

    print(asyncio.run(main()))
