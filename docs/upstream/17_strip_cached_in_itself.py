"""Strip: a strip that is its own division or extension is cached in itself (a cycle).

`Strip.divide` at the strip's own end caches `[self]`, and `crop_extend` to its own length
caches `self`: each such strip, with its seven caches, is freed only by the cyclic garbage
collector. Every frame divides each line it draws at the widgets' edges.

Run: python 17_strip_cached_in_itself.py (plain Textual 8.2.8; no byok-tui).
Prints REPRODUCED when such strips are left for the collector.
"""

import gc

from rich.segment import Segment
from textual.strip import Strip


def main() -> str:
    gc.collect()
    gc.disable()
    try:
        for _ in range(100):
            strip = Strip([Segment("hello "), Segment("world")])
            strip.divide([11])  # cut at its own end: the strip itself
            strip.crop_extend(0, 11, None)  # its own length: the strip itself
        left = gc.collect()
    finally:
        gc.enable()
    if left:
        return f"REPRODUCED: 100 strips left {left} objects for the cyclic collector"
    return "NOT REPRODUCED: the strips were freed as they went"


if __name__ == "__main__":
    print(main())
