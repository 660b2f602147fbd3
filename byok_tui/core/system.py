"""Every call that differs between POSIX and Windows, in one place, each with a branch for
both: locking a file, the effective user, a child's process group and ending it, splitting a
command line, and signal handlers on the event loop.

Which branch runs is read when the call is made (`WINDOWS`), so that tests on Linux exercise
the Windows branches by setting it (tests/test_system.py). Never imports Textual.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import shlex
import signal
import subprocess
from collections.abc import Callable
from typing import Any

WINDOWS = os.name == "nt"


def lock_exclusively(fd: int) -> None:
    """Hold an exclusive lock on the open file `fd` until it is closed (blocks meanwhile):
    flock on POSIX, msvcrt's byte-range lock on Windows."""
    if WINDOWS:
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        while True:  # LK_LOCK retries for ten seconds, then raises: wait as flock does
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # type: ignore[attr-defined]
                return
            except OSError as error:
                if error.errno not in (errno.EDEADLK, errno.EACCES):
                    raise  # not "held by another process": waiting would never end
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_EX)


def owned_by_someone_else(uid: int) -> bool:
    """Whether a file's owner `uid` is another user than this process's. Windows has no
    POSIX owners (`st_uid` is 0): there, a file's owner is not checked this way."""
    geteuid = getattr(os, "geteuid", None)
    if WINDOWS or geteuid is None:
        return False
    return bool(uid != geteuid())


def own_process_group() -> dict[str, Any]:
    """Popen arguments that start a child in a process group of its own, so that ending it
    ends whatever it started too."""
    if WINDOWS:
        return {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0x200)}
    return {"start_new_session": True}


def end_process_tree(child: subprocess.Popen[bytes]) -> None:
    """End `child` and every process it started, at once (a key command past its time limit,
    or printing without end), and wait for it."""
    if WINDOWS:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(  # Windows' own taskkill, found on its PATH
                ["taskkill", "/F", "/T", "/PID", str(child.pid)],  # noqa: S607
                capture_output=True,
                timeout=10,
                check=False,
            )
        with contextlib.suppress(OSError):
            child.kill()
    else:
        with contextlib.suppress(OSError):
            os.killpg(child.pid, signal.SIGKILL)
    child.wait()


def split_command(command: str) -> list[str]:
    """The argument list a command line runs as, split as the platform's shell would: POSIX
    quoting, or Windows' (backslashes kept: `C:\\Tools\\pass.exe`). ValueError on an
    unclosed quote."""
    if not WINDOWS:
        return shlex.split(command)
    parts = shlex.split(command, posix=False)
    return [part[1:-1] if len(part) > 1 and part[0] == part[-1] == '"' else part for part in parts]


def on_terminate(loop: asyncio.AbstractEventLoop, handler: Callable[[], object]) -> bool:
    """Call `handler` when the process is asked to terminate (SIGTERM), from the event loop.
    False where the loop cannot (Windows' loops raise NotImplementedError): there, the
    process ends as the platform ends it."""
    try:
        loop.add_signal_handler(signal.SIGTERM, handler)
    except (NotImplementedError, RuntimeError, AttributeError):
        return False
    return True


def on_hang_up(loop: asyncio.AbstractEventLoop, handler: Callable[[], object]) -> bool:
    """Call `handler` when the terminal hangs up (SIGHUP: closed, or an SSH session dropped),
    from the event loop. False where there is no such signal or the loop cannot (Windows)."""
    hang_up = getattr(signal, "SIGHUP", None)
    if WINDOWS or hang_up is None:
        return False
    try:
        loop.add_signal_handler(hang_up, handler)
    except (NotImplementedError, RuntimeError):
        return False
    return True


def forget_signal_handlers(loop: asyncio.AbstractEventLoop, *, ending: bool = False) -> None:
    """Take back what on_terminate and on_hang_up set (nothing, where they could not).
    `ending`: the process is ending as a quit ends it; a hang-up or SIGTERM arriving now is
    ignored rather than kill it mid-way (taking a handler back restores the default, which
    for both is to die: the terminal closing sends SIGHUP as the app ends on its input's end)."""
    for name in ("SIGHUP", "SIGTERM"):
        handled = getattr(signal, name, None)
        if handled is not None:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(handled)
                if ending:
                    signal.signal(handled, signal.SIG_IGN)
