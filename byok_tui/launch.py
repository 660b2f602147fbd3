"""The process's entry point (`byok-tui`, `python -m byok_tui`): what must happen before the
rest of byok-tui is imported.

The records whose modules load before the first frame (a provider and its models, a key's
state, a binding, the paths, the services) are NamedTuples rather than dataclasses: a frozen
dataclass compiles its generated methods when its class is made, ~0.5 ms a class on Python
3.11 against ~0.07 ms for a NamedTuple, and ten of them took ~7 ms of the start. Messages,
mutable state and the records of a key itself (whose repr must hide it) stay dataclasses."""

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
    # (app.py, _run_as_started).
    gc.disable()
    sys.setswitchinterval(STARTING_SWITCH_INTERVAL)


def run() -> int:
    if len(sys.argv) == 1:  # the app, prepared before anything else is imported (the app's
        prepare_app()  # options, `--log FILE`, are read first: cli prepares it then)
    from byok_tui.cli import main

    return main()
