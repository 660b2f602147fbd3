"""StylesCache: a widget's drawn lines outlive it, held by a class-wide `lru_cache`.

`StylesCache.get_inner_outer` is an instance method under `functools.lru_cache(1024)`, so
the cache keys hold the instance: the styles cache of every widget drawn (its `_cache` of
strips, each line it drew) stays alive after the widget is removed, up to 1,024 of them.
Reported upstream as Textualize/textual#6665.

Run: python 22_styles_cache_kept_by_lru_cache.py (plain Textual 8.2.8; no byok-tui).
Prints REPRODUCED when the styles caches of removed widgets are still alive.
"""

import asyncio
import gc
import weakref

from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.widgets import Label


class Cards(App[None]):
    def compose(self) -> ComposeResult:
        yield Vertical(*(Label(f"card {number}") for number in range(40)))


async def drawn_then_removed() -> list[weakref.ref[object]]:
    app = Cards()
    async with app.run_test() as pilot:
        await pilot.pause()  # drawn: each label's styles cache holds its line
        caches = [weakref.ref(label._styles_cache) for label in app.query(Label)]
        await app.query_one(Vertical).remove_children()
        await pilot.pause()
    return caches


def main() -> str:
    caches = asyncio.run(drawn_then_removed())  # the app, and its loop, gone too
    gc.collect()
    kept = sum(cache() is not None for cache in caches)
    if kept:
        return f"REPRODUCED: {kept} of 40 removed labels' styles caches are still alive"
    return "NOT REPRODUCED: the removed labels' styles caches were freed"


if __name__ == "__main__":
    print(main())
