"""What must happen before the app's modules load, and what is put back once it has started.

Imports nothing of byok-tui: the entry point (launch.py) and the shell (cli/) run it before
anything else is imported, and the app (app.py) reads the running interval from here.
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
    # (app.py, _run_as_started).
    gc.disable()
    sys.setswitchinterval(STARTING_SWITCH_INTERVAL)
