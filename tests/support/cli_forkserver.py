"""A fork server for `byok-tui` runs in the tests: `python -m tests.support.cli_forkserver SOCKET`.

The suite runs the command line ~700 times; each fresh interpreter spent ~0.2 s of its ~0.3 s
importing. This server imports the command line's modules once, then forks a process per run:
a real process of its own, its standard streams the caller's pipes, its environment and
working folder the caller's, `python -m byok_tui` run in it as `__main__`, and ended as the
interpreter ends a program (threads joined, `atexit`, streams flushed, exit status from
`SystemExit` or an uncaught exception), all but the teardown of its modules (see
`ended_as_a_program`). tests/support/cli.py decides which runs come here (not one whose
start-up itself differs: an interpreter setting or stdin inherited).

Protocol, one connection a run: the caller sends one JSON line (argv, environment, folder)
with the run's stdin, stdout and stderr as passed descriptors; the server answers `pid N`, then
`exit N` (a negative N for a signal, as subprocess says it)."""

from __future__ import annotations

import atexit
import gc
import importlib
import importlib.util
import json
import os
import pkgutil
import signal
import socket
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

# What the command line imports on its paths: the UI-free layers, and the libraries they
# import lazily (never Textual: the command line does not draw).
PACKAGES = ("byok_tui.core", "byok_tui.keys", "byok_tui.storage", "byok_tui.providers",
            "byok_tui.spend", "byok_tui.chat", "byok_tui.tools", "byok_tui.cli")  # fmt: skip
LIBRARIES = ("httpx", "keyring", "sqlite3", "genai_prices", "mcp.client.stdio",
             "mcp.client.streamable_http", "anyio", "tests.support.isolated_keyring")  # fmt: skip
RUN_ENDS = 3  # how many descriptors a request passes: stdin, stdout, stderr


def warm_up() -> None:
    for name in LIBRARIES:
        try:
            importlib.import_module(name)
        except ImportError:  # an extra not installed: the run imports what it can, as ever
            continue
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        for module in pkgutil.walk_packages(package.__path__, f"{package_name}."):
            importlib.import_module(module.name)
    if "textual" in sys.modules:
        raise RuntimeError("the command line's modules imported Textual")


def listening_at(path: str) -> socket.socket:
    """A socket listening at `path`, which appears only once it listens. A run waits for
    the path, then connects: bound at the path itself, the path was there a moment before
    the socket listened, and a run that came then was refused."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    binding = f"{path}.binding"
    listener.bind(binding)
    listener.listen()
    Path(binding).replace(path)  # a connect finds the socket by its file, renamed or not
    return listener


def serve(path: str) -> list[str]:
    """Answer runs until the caller goes; returns only in a run's own process, with its
    arguments (its streams, environment and folder set already)."""
    parent = os.getppid()
    listener = listening_at(path)
    listener.settimeout(1.0)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the waiters are reaped as they end
    while os.getppid() == parent:
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            continue
        connection.settimeout(None)
        message, fds, _flags, _address = socket.recv_fds(connection, 1 << 16, RUN_ENDS)
        while not message.endswith(b"\n"):  # a long environment may come in pieces
            message += connection.recv(1 << 16)
        if os.fork() == 0:
            listener.close()
            return _waiter(connection, json.loads(message), fds)
        connection.close()
        for fd in fds:
            os.close(fd)
    sys.exit(0)


def _waiter(connection: socket.socket, request: dict[str, Any], fds: list[int]) -> list[str]:
    """Start the run and say how it ended: its parent, so that its status can be read."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    assert threading.active_count() == 1, "a fork with threads running"
    pid = os.fork()
    if pid == 0:
        connection.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.closerange(RUN_ENDS, os.sysconf("SC_OPEN_MAX"))
        os.chdir(request["cwd"])
        sys.path[0] = request["cwd"]  # as `python -m` puts the folder it starts in first
        os.environ.clear()
        os.environ.update(request["environ"])
        return list(request["argv"])
    for fd in fds:
        os.close(fd)
    connection.sendall(f"pid {pid}\n".encode())
    _, status = os.waitpid(pid, 0)
    connection.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
    os._exit(0)


def ended_as_a_program(program: Callable[[], object]) -> NoReturn:
    """Run `program` as a process's main module, and end the process as the interpreter ends
    a program: its status from `SystemExit` (said on standard error when not a number) or an
    uncaught exception (its traceback printed), its non-daemon threads joined, its `atexit`
    functions run, what is left of its garbage collected (finalizers run) and its standard
    streams flushed (120 if that fails). Not the teardown of every module after that: in a
    forked run it wrote to nearly every page shared with the server (~10,150 page faults a
    run against ~1,950 without it, and ~65 ms of CPU; the suite makes ~700 runs)."""
    try:
        program()
        status = 0
    except SystemExit as ended:
        status = _status_of(ended.code)
    except KeyboardInterrupt:
        sys.excepthook(*sys.exc_info())
        status = -signal.SIGINT  # the interpreter ends itself by SIGINT then
    except BaseException:
        sys.excepthook(*sys.exc_info())
        status = 1
    threading._shutdown()  # type: ignore[attr-defined]  # the interpreter's own join
    atexit._run_exitfuncs()
    gc.collect()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            status = status or 120
    if status < 0:
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    os._exit(status & 0xFF)


def _status_of(code: object) -> int:
    """The exit status `SystemExit(code)` gives, as the interpreter gives it."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


if __name__ == "__main__":
    warm_up()
    # What was imported is shared with every run, unchanged: kept out of the collector's
    # view, a run neither collects it nor copies its pages (a run's exit took ~0.4 s more).
    gc.freeze()
    arguments = serve(sys.argv[1])
    # Only a run's own process comes here: from now on it is `python -m byok_tui ARGS`.
    import runpy

    sys.argv = ["byok_tui", *arguments]  # [0] is set to __main__.py's path, as -m sets it
    ended_as_a_program(lambda: runpy.run_module("byok_tui", run_name="__main__", alter_sys=True))
