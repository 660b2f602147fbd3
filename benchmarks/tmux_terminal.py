"""A program running in tmux, a real terminal emulator: it parses every byte the program
writes and keeps a screen of cells, as the user's terminal does (a pty read by the benchmark
itself only throws the bytes away).

Each TmuxTerminal is a tmux server of its own (a private socket), one window of the given
size, the program run directly in it (no shell), the environment given. What the program
writes is copied to a file (`pipe-pane`) while `recording()`: its bytes are counted there,
and a key's echo is timed there, to the millisecond, from the moment the key is sent to the
moment the program has written it (tmux's send-keys, ~5 ms, is in both the idle echo and
the echo while a reply streams).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

TMUX = shutil.which("tmux") or "tmux"  # the machine's own; absent, the run says so


class TmuxTerminal:
    def __init__(
        self, argv: list[str], env: dict[str, str], size: tuple[int, int], work: Path
    ) -> None:
        self._socket = f"byok-bench-{uuid.uuid4().hex[:8]}"
        self._env = {**env, "TERM": "xterm-256color", "COLORTERM": "truecolor"}
        self._work = work
        work.mkdir(parents=True, exist_ok=True)
        self.started = time.perf_counter()
        # As a user's tmux runs a program: TERM as tmux recommends, true colour passed on.
        self._tmux(
            "-f", "/dev/null", "start-server", ";",
            "set-option", "-g", "default-terminal", "tmux-256color", ";",
            "set-option", "-g", "remain-on-exit", "on", ";",
            "new-session", "-d", "-s", "bench",
            "-x", str(size[0]), "-y", str(size[1]), "--", *argv,
        )  # fmt: skip
        self.pid = int(self._tmux("display-message", "-p", "-t", "bench", "#{pane_pid}"))
        self._recording: Path | None = None

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            [TMUX, "-L", self._socket, *args],
            env=self._env,
            capture_output=True,
            text=True,
            check=True,
            timeout=20,
        )
        return done.stdout.strip()

    def screen(self) -> str:
        """The text on screen now, as the terminal shows it."""
        return self._tmux("capture-pane", "-p", "-t", "bench")

    def styled_screen(self) -> list[str]:
        """Each line on screen now with its styles, as the terminal holds them."""
        return self._tmux("capture-pane", "-p", "-e", "-t", "bench").split("\n")

    def tty(self) -> str:
        """The terminal device the program writes to (another program may write to it too)."""
        return self._tmux("display-message", "-p", "-t", "bench", "#{pane_tty}")

    def resize(self, width: int, height: int) -> None:
        """The terminal made `width` x `height`, as a user drags its edge."""
        self._tmux("resize-window", "-t", "bench", "-x", str(width), "-y", str(height))

    def wait_for(self, text: str, timeout: float = 30, every: float = 0.01) -> float:
        """When `text` was first on screen (perf_counter), polled every `every` s."""
        deadline = time.perf_counter() + timeout
        while text not in (shown := self.screen()):
            if time.perf_counter() > deadline:
                raise TimeoutError(f"never showed {text!r}; {self._what_it_did(shown)}")
            time.sleep(every)
        return time.perf_counter()

    def gone_within(self, text: str, timeout: float, every: float = 0.01) -> bool:
        """Whether `text` left the screen within `timeout` seconds."""
        deadline = time.perf_counter() + timeout
        while text in self.screen():
            if time.perf_counter() > deadline:
                return False
            time.sleep(every)
        return True

    def _what_it_did(self, shown: str, watched: float = 1.0) -> str:
        """What the screen showed, and whether the program drew or worked in the `watched`
        seconds after: a frozen screen with the program idle is not a key lost."""
        said = f"on screen: {shown[-600:]!r}"
        try:
            cpu = self.cpu_seconds()
            time.sleep(watched)
            again = self.screen()
            worked = self.cpu_seconds() - cpu
        except (OSError, subprocess.SubprocessError):
            return f"{said}; the program has ended"
        drawn = "the same" if again == shown else f"changed to {again[-600:]!r}"
        return (
            f"{said}; {watched:g} s later the screen was {drawn}, the program having used "
            f"{worked:.2f} s of CPU meanwhile"
        )

    def ended(self) -> bool:
        return self._tmux("display-message", "-p", "-t", "bench", "#{pane_dead}") == "1"

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "bench", "-l", text)

    def press(self, key: str) -> None:
        self._tmux("send-keys", "-t", "bench", key)

    def cpu_seconds(self) -> float:
        """User and system CPU time the program has used so far (all its threads)."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def resident_mb(self) -> float:
        status = Path(f"/proc/{self.pid}/status").read_text()
        line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
        return int(line.split()[1]) / 1024

    @contextlib.contextmanager
    def recording(self) -> Iterator[Path]:
        """Copy what the program writes to a file, while inside."""
        path = self._work / f"written-{uuid.uuid4().hex[:8]}.bin"
        path.touch()
        self._tmux("pipe-pane", "-t", "bench", "-o", f"cat >> {path}")
        self._recording = path
        try:
            yield path
        finally:
            self._tmux("pipe-pane", "-t", "bench")  # stops the copy
            self._recording = None

    def echo(self, key: str, timeout: float = 5, shows: str | None = None) -> float:
        """Type `key` (drawn by nothing else) while recording; seconds until the program has
        written it (or `shows`, the text the key makes it draw)."""
        assert self._recording is not None, "echo() is timed from what is recorded"
        wanted = (key if shows is None else shows).encode()
        start = self._recording.stat().st_size
        typed = time.perf_counter()
        self.type(key)
        deadline = typed + timeout
        with self._recording.open("rb") as written:
            while time.perf_counter() < deadline:
                written.seek(start)
                if wanted in written.read():
                    return time.perf_counter() - typed
                time.sleep(0.0005)
        raise TimeoutError(f"{key!r} was never drawn")

    def close(self, wait: float = 10) -> None:
        """End the program and its terminal; wait (at most `wait` seconds) until the
        program is gone: it writes its state as it ends, and the caller may then remove the
        folder it writes in."""
        with contextlib.suppress(subprocess.SubprocessError):
            self._tmux("kill-server")
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, 15)
        deadline = time.perf_counter() + wait
        while time.perf_counter() < deadline:
            try:
                state = Path(f"/proc/{self.pid}/stat").read_text().split(") ")[-1]
            except OSError:
                return  # gone
            if state.startswith("Z"):
                return  # ended, not yet reaped (tmux, its parent, is gone too)
            time.sleep(0.02)
