"""The process's entry point (`byok-tui`, `python -m byok_tui`): what must happen before the
rest of byok-tui is imported."""

from __future__ import annotations

import sys


def run() -> int:
    if len(sys.argv) == 1:  # the app (a subcommand keeps the collector on)
        import gc

        # Everything made until the chat screen is up lives as long as the app (modules,
        # styles, screens): collecting meanwhile only slows the start, by ~30 ms before the
        # first frame on two shared cores. The app turns the collector on once the chat
        # screen is up (app.py, _freeze_heap_once).
        gc.disable()
    from byok_tui.cli import main

    return main()
