"""What must happen before the app's modules load, and what is put back once it has started.

Imports nothing of byok-tui: the entry point (launch.py) and the shell (cli/) run it before
anything else is imported; the app (app.py) calls `run_as_started` once the chat screen is
up.
"""

from __future__ import annotations

import gc
import os
import sys

# Textual draws what changed at most this often (its default is 60). A key typed while a reply
# streams waits for the next of these frames after the reply's repaint: at 60, up to ~32 ms
# (benchmark 12, three runs), at 120 ~18-22 ms, for the same CPU (the reply itself is drawn at
# most ten times a second). A TEXTUAL_FPS of the user's own is kept.
FRAMES_PER_SECOND = "120"

# How often the interpreter lets another thread run while the app starts (Python's default is
# 5 ms, put back once the chat screen is up: app.py). Textual's writer thread sends the
# terminal's modes, then the first frame, one write at a time, and after each it waits for a
# busy event loop to let it run again: at 5 ms the first frame reached the terminal 4.7-5.8 ms
# after it was made, at 0.5 ms 0.8-0.9 ms (the frame queued against its bytes on the pty).
STARTING_SWITCH_INTERVAL = 0.0005
RUNNING_SWITCH_INTERVAL = 0.005


def prepare_app() -> None:
    """Before the app's modules load (Textual reads TEXTUAL_FPS as it loads)."""
    os.environ.setdefault("TEXTUAL_FPS", FRAMES_PER_SECOND)
    # Everything made until the chat screen is up lives as long as the app (modules, styles,
    # screens): collecting meanwhile only slows the start, by ~30 ms before the first frame
    # on two shared cores. The app turns the collector on once the chat screen is up
    # (run_as_started).
    gc.disable()
    sys.setswitchinterval(STARTING_SWITCH_INTERVAL)


_heap_frozen = False  # gc.freeze() runs once a process

# Objects allocated between two collections of the youngest generation (Python's default is
# 700). A streamed reply allocates hundreds of thousands of short-lived objects; at 700 the
# collector ran some 80 times during a 5,000-token reply and a full collection (~12 ms) fell
# in the middle of it. Higher lets more garbage wait: at 10,000, benchmark 3 kept ~30 MB more
# than at 700; at 5,000, ~10 MB, for most of the gain.
GC_YOUNG_THRESHOLD = 5_000


def run_as_started() -> None:
    """Once the chat screen is up: move everything loaded so far (modules, styles, the
    screens) out of the collector's sight: it lives as long as the app, and a full collection
    mid-stream then takes a few ms, not ~35 ms; and collect less often (the heap is frozen
    once per process: a later app, in tests and benchmarks, must not freeze an earlier one's
    garbage for good). Threads switch at Python's default interval again."""
    global _heap_frozen
    if not _heap_frozen:
        _heap_frozen = True
        gc.freeze()
        _, older, oldest = gc.get_threshold()
        gc.set_threshold(GC_YOUNG_THRESHOLD, older, oldest)
    gc.enable()  # off from the start until now (prepare_app)
    sys.setswitchinterval(RUNNING_SWITCH_INTERVAL)  # shorter while starting (prepare_app)
