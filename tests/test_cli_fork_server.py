"""The tests' fork server (tests/support/cli_forkserver.py) runs `byok-tui` as a fresh process
would: the same exit status, standard output and error, stdin read, environment and working
folder. If it ever differs, every command-line test would test something else."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import FRESH_ENV, fork_server, run_cli, starts_alike

pytestmark = pytest.mark.skipif(
    os.environ.get(FRESH_ENV) == "1" or not hasattr(os, "fork"), reason="no run is forked"
)

KEY = "sk-proj-" + "F" * 60


Seen = tuple[int, str, str]  # exit status, standard output, standard error


def both(*args: str, env: dict[str, str] | None = None) -> tuple[Seen, Seen]:
    """The run forked from the server, then the same run started afresh."""
    environ = {**os.environ, **(env or {})}
    server = fork_server(environ)
    assert server is not None, "this run would not be forked"
    forked = server.run(list(args), "", environ, 60)
    fresh = run_cli(*args, env={**(env or {}), FRESH_ENV: "1"})
    return _seen(forked), _seen(fresh)


def _seen(result: subprocess.CompletedProcess[str]) -> Seen:
    return result.returncode, result.stdout, result.stderr


@pytest.mark.parametrize(
    "args",
    [("--version",), ("keys", "list"), ("keys", "nonsense"), ("models", "-p", "nowhere")],
    ids=["version", "a-listing", "a-usage-error", "an-error-of-its-own"],
)
def test_a_forked_run_says_and_ends_as_a_fresh_one(args: tuple[str, ...]) -> None:
    forked, fresh = both(*args)
    assert forked == fresh


def test_a_forked_run_reads_stdin_and_sees_the_environment_it_was_given() -> None:
    assert run_cli("keys", "set", "openai", stdin=KEY + "\n").returncode == 0
    forked, fresh = both("keys", "get", "openai")
    assert forked == fresh == (0, KEY + "\n", "")
    environ = {"GROQ_API_KEY": "gsk_" + "G" * 52}
    for result in both("keys", "list", env=environ):  # (its "set N s ago" may differ)
        groq = next(line for line in result[1].splitlines() if line.startswith("groq"))
        assert "environment (GROQ_API_KEY)" in groq, groq


def test_a_forked_run_works_in_the_folder_it_was_started_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_cli("export", "here.json").returncode == 0
    assert (tmp_path / "here.json").is_file()


def test_an_interpreter_setting_of_its_own_is_started_afresh() -> None:
    assert starts_alike({"PYTHONPATH": "a", "HOME": "x"}, {"PYTHONPATH": "a", "HOME": "y"})
    assert not starts_alike({}, {"PYTHONIOENCODING": "cp1252"})
    assert not starts_alike({"LANG": "C.UTF-8"}, {"LANG": "C"})
    assert starts_alike({}, {"PYTHON_KEYRING_BACKEND": "x"})


def test_the_server_s_socket_appears_only_once_it_listens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run waits for the socket's path, then connects: a path there before the server
    listens refused the connection (a command-line test failed so in CI)."""
    import socket

    from tests.support import cli_forkserver

    path = str(tmp_path / "runs")
    there_at_listen: list[bool] = []
    listen = socket.socket.listen

    def noted(self: socket.socket, *args: int) -> None:
        there_at_listen.append(Path(path).exists())
        listen(self, *args)

    monkeypatch.setattr(socket.socket, "listen", noted)
    listener = cli_forkserver.listening_at(path)
    try:
        assert there_at_listen == [False], "the path was there before the socket listened"
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as run:
            run.connect(path)  # found, and listening
    finally:
        listener.close()


PROGRAMS = {
    "an-end-of-its-own": "print('said', end='')",
    "a-status": "import sys; print('out'); sys.exit(3)",
    "an-exit-with-words": "raise SystemExit('stopped: a reason')",
    "an-uncaught-error": "print('before'); raise ValueError('boom')",
    "an-interrupt": "raise KeyboardInterrupt",
    "threads-then-atexit": (
        "import atexit, threading, time\n"
        "def late(): time.sleep(0.2); print('thread done', flush=True)\n"
        "threading.Thread(target=late).start()\n"
        "atexit.register(lambda: print('atexit ran'))\n"
    ),
    "garbage-finalized": (
        "class Held:\n"
        "    def __del__(self): print('finalized')\n"
        "held = Held(); held.me = held; del held\n"
        "import gc; gc.disable()\n"
    ),
}


@pytest.mark.parametrize("source", PROGRAMS.values(), ids=PROGRAMS.keys())
def test_a_forked_run_ends_as_the_interpreter_ends_a_program(source: str) -> None:
    """The server skips only the teardown of a run's modules: what a program's end does that
    anyone can see (status, what it says, its threads and `atexit`, the finalizers of its
    garbage) is as a fresh interpreter does it. A traceback's frames differ: the last line
    of what is said on standard error is compared."""
    import sys

    ended = (
        "from tests.support.cli_forkserver import ended_as_a_program\n"
        f"code = compile({source!r}, '<string>', 'exec')\n"
        "ended_as_a_program(lambda: exec(code, {'__name__': '__main__'}))\n"
    )
    runs = [
        subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
        for program in (source, ended)
    ]
    fresh, emulated = ((r.returncode, r.stdout, r.stderr.strip().splitlines()[-1:]) for r in runs)
    assert emulated == fresh
