"""Which run of byok-tui kept something, and whether that run has ended.

A run keeps its composer's draft under its own name, so that two byok-tui open at once (two
terminals) never overwrite each other's; a later start takes over the drafts of runs that have
ended: quit (the name says so), killed (no such process), or before the machine restarted.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

ENDED = ":ended"  # the suffix a run's name takes when it quits


def _boot() -> str:
    """This boot of the machine (Linux); elsewhere "" (a process id alone then tells)."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    except OSError:
        return ""


def new_run() -> str:
    """A name for this run: the boot, the process, and a part of its own (one process may run
    the app more than once, as tests do)."""
    return f"{_boot()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def has_ended(run: str) -> bool:
    """Whether `run` has ended: it quit, or its process is gone. A name not of this form
    (from an import, another machine) counts as ended: its draft is given back."""
    if run.endswith(ENDED):
        return True
    boot, _, rest = run.partition(":")
    pid, _, _own = rest.partition(":")
    if boot != _boot() or not pid.isdigit():
        return True
    if int(pid) == os.getpid():
        return False  # this process: a run of it that ended has said so
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # another user's process: alive
        return False
    return False
