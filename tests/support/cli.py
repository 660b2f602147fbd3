"""Run `byok-tui` as a real process of its own, with the environment the isolation fixture set.

Each run is `python -m byok_tui ARGS` in a process of its own, its stdin, stdout and stderr
pipes, and what comes back is what `subprocess.run` gives. Most runs are forked from a server
that has imported the command line's modules already (tests/support/cli_forkserver.py: ~0.2 s
of CPU less a run); a run whose interpreter would start differently (an interpreter setting
in its environment, an encoding of its own, stdin inherited) is started afresh, as is every
run where fork is not available. BYOK_TEST_FRESH_CLI=1 starts every run afresh.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import locale
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path

COMMAND = (sys.executable, "-m", "byok_tui")
REPO_ROOT = Path(__file__).resolve().parents[2]
FRESH_ENV = "BYOK_TEST_FRESH_CLI"
SERVER_START_LIMIT = 60.0


def run_cli(
    *args: str,
    stdin: str | None = "",
    env: Mapping[str, str] | None = None,
    timeout: float = 60,
    encoding: str | None = None,  # of the child's output, when it is not the locale's
) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    server = fork_server(full_env) if stdin is not None and encoding is None else None
    if server is None:
        return subprocess.run(
            [*COMMAND, *args],
            input=stdin,
            capture_output=True,
            text=True,
            encoding=encoding,
            env=full_env,
            timeout=timeout,
            check=False,
        )
    return server.run(list(args), stdin or "", full_env, timeout)


def starts_alike(environ: Mapping[str, str], other: Mapping[str, str]) -> bool:
    """Whether two environments start the interpreter alike: the same interpreter settings
    (PYTHON*, but the keyring's backend, read when a key is) and locale."""

    def read_at_start(name: str) -> bool:
        return (name.startswith("PYTHON") and name != "PYTHON_KEYRING_BACKEND") or (
            name == "LANG" or name.startswith("LC_")
        )

    names = {name for name in (*environ, *other) if read_at_start(name)}
    return all(environ.get(name) == other.get(name) for name in names)


class ForkServer:
    """This test process's fork server (one, started at its first run, ended with it)."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.environ = dict(environ)
        self._folder = tempfile.mkdtemp(prefix="byok-cli-")
        self._path = str(Path(self._folder) / "runs")
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.cli_forkserver", self._path],
            env=self.environ,
            cwd=REPO_ROOT,
            # Pipes, as every run's are: its standard streams are made for them once.
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        atexit.register(self.end)
        deadline = time.monotonic() + SERVER_START_LIMIT
        while not Path(self._path).exists():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self._process.kill()
                said = self._process.communicate()[1].decode(errors="replace")
                raise RuntimeError(f"the fork server for byok-tui runs did not start: {said}")
            time.sleep(0.01)

    def running(self) -> bool:
        return self._process.poll() is None

    def end(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self._process.kill()
        self._process.wait()
        with contextlib.suppress(OSError):
            Path(self._path).unlink()
            Path(self._folder).rmdir()

    def run(
        self, args: list[str], stdin: str, environ: Mapping[str, str], timeout: float
    ) -> subprocess.CompletedProcess[str]:
        encoding = locale.getpreferredencoding(False)
        ends = [os.pipe() for _ in range(3)]  # stdin, stdout, stderr: (read, write) each
        theirs = [ends[0][0], ends[1][1], ends[2][1]]
        request = {"argv": args, "environ": dict(environ), "cwd": str(Path.cwd())}
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.connect(self._path)
            connection.settimeout(timeout)
            socket.send_fds(connection, [json.dumps(request).encode() + b"\n"], theirs)
            for fd in theirs:
                os.close(fd)
            output: dict[int, bytes] = {}
            readers = [
                threading.Thread(target=_read_all, args=(ends[n][0], output, n), daemon=True)
                for n in (1, 2)
            ]
            for reader in readers:
                reader.start()
            _write_all(ends[0][1], stdin.encode(encoding))
            said = connection.makefile("rb")
            pid = int(said.readline().split()[1])
            try:
                code = int(said.readline().split()[1])
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                for reader in readers:
                    reader.join()
                raise subprocess.TimeoutExpired(
                    [*COMMAND, *args], timeout, output.get(1), output.get(2)
                ) from None
        for reader in readers:
            reader.join()
        return subprocess.CompletedProcess(
            [*COMMAND, *args], code, _text(output[1], encoding), _text(output[2], encoding)
        )


def _read_all(fd: int, into: dict[int, bytes], key: int) -> None:
    with open(fd, "rb") as stream:
        into[key] = stream.read()


def _write_all(fd: int, data: bytes) -> None:
    """Write stdin whole, then close it; a run that exits without reading it is no error."""
    with contextlib.suppress(BrokenPipeError), open(fd, "wb") as stream:
        stream.write(data)


def _text(data: bytes, encoding: str) -> str:
    """As subprocess.run(text=True) decodes: universal newlines."""
    return data.decode(encoding).replace("\r\n", "\n").replace("\r", "\n")


_server: ForkServer | None = None
_server_lock = threading.Lock()


def fork_server(environ: Mapping[str, str]) -> ForkServer | None:
    """The server a run in `environ` is forked from; None when it must start afresh."""
    global _server
    if not hasattr(os, "fork") or environ.get(FRESH_ENV) == "1":
        return None
    with _server_lock:
        if _server is None or not _server.running():
            _server = ForkServer(environ)
        return _server if starts_alike(_server.environ, environ) else None
