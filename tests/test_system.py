"""Every POSIX-only call goes through byok_tui/core/system.py, which has a Windows branch for each.
This machine is Linux: the Windows branches run here with the platform simulated (`WINDOWS`
set, and what Windows lacks taken away: fcntl, geteuid, killpg, the loop's signal handlers),
against real files, real processes and a real event loop. What this cannot prove is that
Windows' own msvcrt and taskkill behave as documented: those calls are stood in for."""

from __future__ import annotations

import asyncio
import builtins
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from byok_tui.core import system
from byok_tui.keys.file_store import FileKeyStore


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process as Windows would have it: no fcntl, geteuid or killpg."""
    monkeypatch.setattr(system, "WINDOWS", True)
    real_import = builtins.__import__

    def no_fcntl(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "fcntl":
            raise ModuleNotFoundError("No module named 'fcntl'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_fcntl)
    monkeypatch.delattr(os, "geteuid")
    monkeypatch.delattr(os, "killpg")


def test_the_key_file_is_locked_with_msvcrt_on_windows(
    windows: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked: list[tuple[int, int]] = []
    msvcrt = SimpleNamespace(LK_LOCK=1, locking=lambda fd, mode, size: locked.append((mode, size)))
    monkeypatch.setitem(sys.modules, "msvcrt", msvcrt)
    store = FileKeyStore(tmp_path / "keys" / "keys.json")
    store.set("app-apikey-openai", "sk-proj-" + "W" * 40)
    assert store.get("app-apikey-openai") == "sk-proj-" + "W" * 40
    assert locked == [(1, 1)], "the write was not made under msvcrt's lock"


def test_no_file_owner_is_compared_where_there_are_no_posix_owners(windows: None) -> None:
    assert system.owned_by_someone_else(12345) is False


def test_on_posix_a_file_of_another_user_is_said_to_be_so() -> None:
    assert system.owned_by_someone_else(os.geteuid() + 1) is True
    assert system.owned_by_someone_else(os.geteuid()) is False


def test_a_child_gets_a_process_group_of_its_own_on_both() -> None:
    assert system.own_process_group() == {"start_new_session": True}
    system.WINDOWS = True
    try:
        assert "creationflags" in system.own_process_group()
    finally:
        system.WINDOWS = os.name == "nt"


def test_ending_a_process_tree_without_killpg_uses_taskkill_then_kill(
    windows: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[list[str]] = []
    real_run = subprocess.run

    def run(args: Any, **kwargs: Any) -> Any:
        if args and args[0] == "taskkill":
            ran.append(list(args))
            return subprocess.CompletedProcess(args, 0)
        return real_run(args, **kwargs)

    monkeypatch.setattr(subprocess, "run", run)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    started = time.monotonic()
    system.end_process_tree(child)
    assert child.returncode is not None and time.monotonic() - started < 10
    assert ran == [["taskkill", "/F", "/T", "/PID", str(child.pid)]]


def test_a_windows_command_line_keeps_its_backslashes(windows: None) -> None:
    assert system.split_command(r"C:\Tools\pass.exe show api\openai") == [
        r"C:\Tools\pass.exe",
        "show",
        r"api\openai",
    ]
    assert system.split_command(r'"C:\Program Files\op\op.exe" read x') == [
        r"C:\Program Files\op\op.exe",
        "read",
        "x",
    ]


def test_a_posix_command_line_is_split_as_a_shell_would() -> None:
    assert system.split_command("pass show 'api keys/openai'") == [
        "pass",
        "show",
        "api keys/openai",
    ]


def test_a_key_command_runs_and_a_runaway_one_is_ended_on_the_windows_branch(
    windows: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key command's whole path (split, start, read bounded, end) on the Windows branch;
    taskkill stood in for by ending the child itself."""
    from byok_tui.keys.command import KeyCommandError, KeyCommands

    def taskkill(args: Any, **kwargs: Any) -> Any:
        return subprocess.CompletedProcess(args, 0)

    monkeypatch.setattr(subprocess, "run", taskkill)
    monkeypatch.setattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0, raising=False)
    key = "sk-proj-" + "K" * 40
    printing = f'"{sys.executable}" -c "print(\'{key}\')"'
    assert KeyCommands({}, cache_seconds=0).run(printing, "the key") == key
    hanging = f'"{sys.executable}" -c "import time; time.sleep(60)"'
    started = time.monotonic()
    with pytest.raises(KeyCommandError, match="did not finish"):
        KeyCommands({}, timeout=0.5).run(hanging, "the key")
    assert time.monotonic() - started < 10


def test_without_signal_handlers_on_the_loop_terminate_is_said_not_to_be_caught() -> None:
    class WindowsLoop:
        def add_signal_handler(self, *_args: object) -> None:
            raise NotImplementedError

    assert system.on_terminate(WindowsLoop(), lambda: None) is False  # type: ignore[arg-type]


async def test_on_posix_terminate_reaches_the_loop() -> None:
    loop = asyncio.get_running_loop()
    called: list[bool] = []
    assert system.on_terminate(loop, lambda: called.append(True)) is True
    import signal

    try:
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(50):
            if called:
                break
            await asyncio.sleep(0.01)
        assert called == [True]
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


def test_no_module_calls_a_posix_only_function_but_system() -> None:
    """fcntl, geteuid, killpg and a loop's signal handlers appear in byok_tui/core/system.py only
    (and compat.py, which is Textual's Linux driver's)."""
    root = Path(__file__).parents[1] / "byok_tui"
    found = []
    for path in root.rglob("*.py"):
        if path.name in ("system.py", "compat.py") or path.parent.name == "__pycache__":
            continue
        text = path.read_text()
        for call in ("import fcntl", "geteuid(", "killpg(", "shlex.split("):
            if call in text:
                found.append(f"{path.relative_to(root)}: {call}")
        if "add_signal_handler(signal.SIGTERM" in text:
            found.append(f"{path.relative_to(root)}: add_signal_handler(SIGTERM)")
    assert found == []


def test_there_is_no_hang_up_to_catch_on_windows(windows: None) -> None:
    class Loop:
        def add_signal_handler(self, *_args: object) -> None:
            raise AssertionError("asked for a signal Windows does not have")

        def remove_signal_handler(self, *_args: object) -> bool:
            raise NotImplementedError  # as Windows' loops do

    assert system.on_hang_up(Loop(), lambda: None) is False  # type: ignore[arg-type]
    system.forget_signal_handlers(Loop())  # type: ignore[arg-type]  # nothing to take back


def test_the_windows_lock_waits_while_held_and_raises_any_other_error(
    windows: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    answers = [OSError(errno.EDEADLK, "held"), None]

    def locking(_fd: int, _mode: int, _size: int) -> None:
        answer = answers.pop(0)
        if answer is not None:
            raise answer

    monkeypatch.setitem(sys.modules, "msvcrt", SimpleNamespace(LK_LOCK=1, locking=locking))
    fd = os.open(os.devnull, os.O_RDWR)
    try:
        system.lock_exclusively(fd)  # held once (ten seconds, on Windows), then had
        assert answers == []
        answers[:] = [OSError(errno.EBADF, "bad descriptor")]
        with pytest.raises(OSError, match="bad descriptor"):
            system.lock_exclusively(fd)
    finally:
        os.close(fd)


def test_a_hang_up_while_the_app_ends_is_ignored_not_a_kill() -> None:
    """Taking the loop's handler back restores SIGHUP's default, which is to die: the
    terminal closing sends it as the app ends on its input's end, and the app was killed
    mid-way (a CI run: 'ended by signal 1, not by quitting'). An ending process ignores it;
    an app that does not end its process (tests) leaves the default."""
    import asyncio
    import signal

    before = {sig: signal.getsignal(sig) for sig in (signal.SIGHUP, signal.SIGTERM)}
    loop = asyncio.new_event_loop()
    try:
        for ending, expected in ((False, signal.SIG_DFL), (True, signal.SIG_IGN)):
            assert system.on_hang_up(loop, lambda: None)
            assert system.on_terminate(loop, lambda: None)
            system.forget_signal_handlers(loop, ending=ending)
            assert signal.getsignal(signal.SIGHUP) == expected
            assert signal.getsignal(signal.SIGTERM) == expected
    finally:
        loop.close()
        for sig, handler in before.items():
            signal.signal(sig, handler)
