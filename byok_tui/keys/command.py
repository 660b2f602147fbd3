"""Keys printed by a command (`pass show api/openai`, `op read op://…`, `rbw get …`).

The command runs without a shell, as the argument list a shell would split it into, with an
environment that holds no provider key, no standard input and a time limit. The first line it
prints, trimmed, is the key; it is held in memory for the time the user chose and written
nowhere. A failure names the program and the first line of its standard error, with whatever it
printed on standard output taken out (a key of no known shape, repeated in an error message,
is still that key) and redacted; never the output itself. Its output is read only up to a few
kilobytes: a command that prints without end is stopped, never read whole into memory.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO

from byok_tui.core.errors import ByokError, ErrorKind
from byok_tui.core.key_text import KeyCharacterError, check_key
from byok_tui.core.redaction import REDACTED, redact, remember_secret
from byok_tui.core.system import end_process_tree, own_process_group, split_command

OP_SHORTHAND = "op://"  # `op://vault/item/field` stands for `op read op://vault/item/field`
COMMAND_TIMEOUT = 15.0
DEFAULT_CACHE_SECONDS = 600.0
LONGEST_STDERR_SHOWN = 200
# A key is one line; a password manager's messages a few more. Past this on either stream the
# command is stopped: `yes` would otherwise be read into memory until the time limit.
LONGEST_OUTPUT = 8 * 1024
# Words of standard output shorter than this are not taken out of standard error as keys.
SHORTEST_KEY_WORD = 8


def command_argv(command: str) -> list[str]:
    """The argument list `command` runs as."""
    if command.startswith(OP_SHORTHAND):
        return ["op", "read", command]
    try:
        argv = split_command(command)
    except ValueError as error:  # an unclosed quote
        raise ByokError(f"the key command cannot be read: {error}") from None
    if not argv:
        raise ByokError("the key command is empty")
    return argv


def program_of(command: str) -> str:
    """The program a command runs, by its name alone (`pass`, `op`): what the app shows."""
    try:
        return Path(command_argv(command)[0]).name
    except ByokError:
        return "?"


class KeyCommandError(ByokError):
    """The command that prints a key failed: nothing was sent."""

    kind = ErrorKind.NO_KEY

    def __init__(
        self, what: str, program: str, problem: str, *, stderr: bytes = b"", stdout: bytes = b""
    ) -> None:
        said = ""
        lines = stderr.decode("utf-8", errors="replace").strip().splitlines()
        if lines:
            # Redacted whole before it is shortened: a cut key would no longer be recognised.
            first = redact(_without_output(lines[0].strip(), stdout))
            said = f": {first[:LONGEST_STDERR_SHOWN]}"
        super().__init__(
            f"The command for {what} failed: {program} {problem}{said}",
            remedy="Check the command (`byok-tui keys list` shows it) and that you are signed "
            "in to your password manager; nothing was sent.",
        )


def _without_output(text: str, stdout: bytes) -> str:
    """`text` with every line, and every long word, of `stdout` replaced: a failing command
    may print its key and then repeat it in its error."""
    printed = stdout.decode("utf-8", errors="replace").splitlines()
    pieces = {line.strip() for line in printed} | {w for line in printed for w in line.split()}
    for piece in sorted(pieces, key=len, reverse=True):
        if len(piece) >= SHORTEST_KEY_WORD:
            text = text.replace(piece, REDACTED)
    return text


class _OutputTooLong(Exception):
    pass


def _communicate(child: subprocess.Popen[bytes], timeout: float) -> tuple[bytes, bytes]:
    """What the child printed on each stream, read up to LONGEST_OUTPUT; raises
    subprocess.TimeoutExpired after `timeout`, _OutputTooLong past the limit (the child's
    process group killed in both cases)."""
    assert child.stdout is not None and child.stderr is not None
    over = threading.Event()
    kept: dict[int, list[bytes]] = {1: [], 2: []}

    def read(stream: IO[bytes], sink: list[bytes]) -> None:
        total = 0
        while chunk := stream.read1(4096):  # type: ignore[attr-defined]
            sink.append(chunk[: max(0, LONGEST_OUTPUT - total)])
            total += len(chunk)
            if total > LONGEST_OUTPUT:
                over.set()
                return

    readers = [
        threading.Thread(target=read, args=(child.stdout, kept[1]), daemon=True),
        threading.Thread(target=read, args=(child.stderr, kept[2]), daemon=True),
    ]
    for reader in readers:
        reader.start()
    deadline = time.monotonic() + timeout
    while child.poll() is None and not over.is_set() and time.monotonic() < deadline:
        over.wait(0.02)
    timed_out = child.poll() is None and not over.is_set()
    if timed_out or over.is_set():
        _kill_group(child)
    for reader in readers:  # a child left behind may hold a pipe open: end its group too
        reader.join(1.0)
        if reader.is_alive():
            _kill_group(child)
            reader.join(1.0)
    child.stdout.close()
    child.stderr.close()
    if over.is_set():
        raise _OutputTooLong
    if timed_out:
        raise subprocess.TimeoutExpired(child.args, timeout)
    return b"".join(kept[1]), b"".join(kept[2])


def _kill_group(child: subprocess.Popen[bytes]) -> None:
    end_process_tree(child)


class KeyCommands:
    """Runs key commands and keeps what they print in memory for `cache_seconds` (0: run
    the command for every request). Thread-safe: the app runs commands in worker threads."""

    def __init__(
        self,
        environ: Mapping[str, str] | Callable[[], Mapping[str, str]],
        *,
        cache_seconds: float = DEFAULT_CACHE_SECONDS,
        timeout: float = COMMAND_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # A callable is called when the first command runs: working out an environment with
        # no key in it scans every variable, which start-up must not wait for.
        self._environ = environ
        self.cache_seconds = cache_seconds
        self._timeout = timeout
        self._clock = clock
        self._held: dict[str, tuple[float, str]] = {}
        self._lock = threading.Lock()

    def cached(self, command: str) -> str | None:
        """The key `command` printed, while it is held; None when it must run."""
        with self._lock:
            held = self._held.get(command)
            if held is None or self._clock() - held[0] >= self.cache_seconds:
                self._held.pop(command, None)
                return None
            return held[1]

    def run(self, command: str, what: str) -> str:
        """The key `command` prints (held, or printed now). `what` names the key in errors
        ("the OpenAI key"). Blocks for up to the time limit: never call it on the event loop."""
        held = self.cached(command)
        if held is not None:
            return held
        key = self._run(command, what)
        remember_secret(key)
        if self.cache_seconds > 0:
            with self._lock:
                self._held[command] = (self._clock(), key)
        return key

    def _run(self, command: str, what: str) -> str:
        argv = command_argv(command)
        program = Path(argv[0]).name
        try:
            child = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(self._environ() if callable(self._environ) else self._environ),
                **own_process_group(),  # a time-out ends it and whatever it started
            )
        except FileNotFoundError:
            raise KeyCommandError(what, program, "was not found") from None
        except OSError as error:
            raise KeyCommandError(what, program, f"could not start ({error.strerror})") from None
        try:
            out, err = _communicate(child, self._timeout)
        except subprocess.TimeoutExpired:
            raise KeyCommandError(
                what, program, f"did not finish within {self._timeout:g} s"
            ) from None
        except _OutputTooLong:
            raise KeyCommandError(
                what, program, f"printed more than {LONGEST_OUTPUT // 1024} KB (a key is one line)"
            ) from None
        if child.returncode != 0:
            raise KeyCommandError(
                what, program, f"exited with status {child.returncode}", stderr=err, stdout=out
            )
        lines = out.decode("utf-8", errors="replace").splitlines()
        first = lines[0] if lines else ""
        try:
            key = check_key(first)
        except KeyCharacterError as bad:
            raise KeyCommandError(
                what,
                program,
                f"printed a first line that is not a key (character {bad.position} is "
                f"{bad.described})",
            ) from None
        if not key:
            raise KeyCommandError(what, program, "printed nothing", stderr=err)
        return key
