"""Strip: every strip makes seven caches as it is made, and most use one or none.

`Strip.__init__` makes seven `FIFOCache`s; a line padded, cropped, cut at a widget's edge,
drawn and dropped uses one or none. Strips that live a while carry them into the older
generation, whose collections pause the app.

Run: python 18_strip_makes_seven_caches.py (plain Textual 8.2.8; no byok-tui).
Prints REPRODUCED when a strip no one has used holds caches.
"""

import gc

from rich.segment import Segment
from textual.cache import FIFOCache
from textual.strip import Strip


def main() -> str:
    strip = Strip([Segment("hello "), Segment("world")])
    caches = sum(isinstance(held, FIFOCache) for held in gc.get_referents(strip))
    if caches:
        return f"REPRODUCED: a strip just made holds {caches} caches"
    return "NOT REPRODUCED: a strip just made holds no cache"


if __name__ == "__main__":
    print(main())
