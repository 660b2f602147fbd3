"""Shared pieces: a data folder with a big database and keys, a pty launcher, a loop-stall
monitor, and resident memory."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import pty
import re
import select
import signal
import sqlite3
import statistics
import struct
import subprocess
import sys
import termios
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from byok_tui.core.registry import key_providers
from byok_tui.keys import entry_name


@dataclass
class Result:
    """One row of the table: a figure against its baseline from the same run, and its target."""

    number: int
    what: str
    figure: str
    baseline: str
    ratio: float | None
    target: str
    met: bool | None


@dataclass
class Settling:
    """How long a benchmark waits for the app's own work to settle before it reads a figure:
    as long as the figure needs, or a quarter of it in smoke mode (`--quick` checks that each
    benchmark runs and reports, not its figures: the test suite runs it)."""

    share: float = 1.0


SETTLING = Settling()


def settle(seconds: float) -> float:
    """`seconds` of settling, as this run waits them (see Settling)."""
    return seconds * SETTLING.share


def percentile(figures: list[float], percent: int) -> float:
    """The `percent`th percentile of `figures`, never outside their range: interpolated
    between the figures themselves (`statistics.quantiles`' default extrapolates past the
    greatest of a few, as a "95th percentile" above the maximum)."""
    if len(figures) == 1:
        return figures[0]
    return statistics.quantiles(figures, n=100, method="inclusive")[percent - 1]


PROSE = "The quick brown fox jumps over the lazy dog. " * 6
LIST = "- first point\n- second point with `code`\n- third point\n"
CODE = "```python\ndef add(a, b):\n    return a + b\n```\n"


def message_text(number: int) -> str:
    return (PROSE, f"Steps:\n{LIST}", f"Here is code:\n\n{CODE}")[number % 3]


MESSAGE_SPACING = 30.0  # seconds between two messages of the benchmarks' conversations


def compile_like_an_install() -> None:
    """Compile byok_tui's bytecode, as `pip install .` does (an editable install writes it
    on the first run). This workplace sets PYTHONDONTWRITEBYTECODE, so without it every
    launched app compiled byok_tui's ~70 modules again (~50 ms), which no user pays but once;
    Textual's bytecode was compiled when it was installed. Writes byok_tui/__pycache__
    (ignored by git); a module already compiled is left as it is."""
    package = Path(__file__).resolve().parent.parent / "byok_tui"
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True)


def fresh_heap() -> None:
    """Before an app is measured in this process: the heap it would have in a process of its
    own. The app freezes what start-up loaded, once per process (byok_tui/core/startup.py,
    run_as_started); the first app measured here froze its own objects, and the apps
    after it were kept alive through them: each later collection walked them all (opening a
    3 MB reply after the other benchmarks: collections of 150-300 ms, against none above
    25 ms in a process of its own)."""
    import gc

    import byok_tui.core.startup

    gc.unfreeze()
    gc.collect()
    byok_tui.core.startup._heap_frozen = False


def forget_drafts(env: dict[str, str]) -> None:
    """No draft left in the home by an earlier start: byok-tui gives one back to the composer
    (drawn, and costed by the estimate), so every start a benchmark makes begins alike."""
    from byok_tui.core.paths import app_paths
    from byok_tui.storage.draft_rows import DRAFT_SETTING

    database = app_paths(env).data_dir / "byok-tui.sqlite3"
    if database.exists():
        with contextlib.closing(sqlite3.connect(database)) as db, db:
            db.execute(
                "DELETE FROM settings WHERE substr(name, 1, ?) = ?",
                (len(DRAFT_SETTING), DRAFT_SETTING),
            )


def make_home(root: Path, conversations: int, messages_each: int) -> dict[str, str]:
    """A BYOK_TUI_HOME with a key for every provider and a filled database; returns env."""
    root.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "BYOK_TUI_HOME": str(root),
        "BYOK_TUI_KEYSTORE": "file",
        "OLLAMA_HOST": "127.0.0.1:9",
    }
    keys = {entry_name(p.id): f"bench-key-{p.id}-" + "k" * 30 for p in key_providers()}
    keys_dir = root / "keys"
    keys_dir.mkdir(mode=0o700, exist_ok=True)
    (keys_dir / "keys.json").write_text(json.dumps(keys))
    (keys_dir / "keys.json").chmod(0o600)
    from byok_tui.storage.schema import LINK_IN_ORDER
    from byok_tui.storage.store import Store

    store = Store(root / "data" / "byok-tui.sqlite3")
    bot = store.default_bot("openai", "gpt-5.4-mini")
    store.close()
    db = sqlite3.connect(root / "data" / "byok-tui.sqlite3")
    now = time.time()
    with db:
        for c in range(conversations):
            conv_uuid = str(uuid.uuid4())
            cursor = db.execute(
                "INSERT INTO conversations (uuid, bot_id, title, created, updated)"
                " VALUES (?, ?, ?, ?, ?)",
                (conv_uuid, bot.id, f"Conversation {c}", now, now + c),
            )
            conversation_id = cursor.lastrowid
            db.executemany(
                "INSERT INTO messages (uuid, conversation_id, role, content, status, provider,"
                " model, key_source, created, updated) VALUES (?, ?, ?, ?, 'complete', 'openai',"
                " 'gpt-5.4-mini', 'global', ?, ?)",
                [
                    (
                        str(uuid.uuid4()),
                        conversation_id,
                        "user" if m % 2 == 0 else "assistant",
                        message_text(m),
                        # Written over time, half a minute apart, as a person writes: the
                        # spend of today and of this month (read on opening) holds a day's.
                        now - (messages_each - m) * MESSAGE_SPACING,
                        now - (messages_each - m) * MESSAGE_SPACING,
                    )
                    for m in range(messages_each)
                ],
            )
    db.executescript(LINK_IN_ORDER)  # written with plain SQL: each follows the one before
    db.close()
    return env


def rss_mb(pid: int | None = None) -> float:
    status = Path(f"/proc/{pid or os.getpid()}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


ESCAPE_SEQUENCE = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()].|.)")


class Terminal:
    """A program running in a pseudo-terminal of its own: what it draws is read (and kept,
    the last 64 KiB), keys are typed into it, and its CPU time is read from /proc."""

    def __init__(self, argv: list[str], env: dict[str, str], size: tuple[int, int]) -> None:
        self.leader, follower = pty.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
        self.proc = subprocess.Popen(
            argv,
            stdin=follower,
            stdout=follower,
            stderr=follower,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
        os.close(follower)
        self.seen = b""

    def read(self, seconds: float) -> bytes:
        """What it draws in the next `seconds` (at most)."""
        got = b""
        ready, _, _ = select.select([self.leader], [], [], seconds)
        if ready:
            with contextlib.suppress(OSError):
                got = os.read(self.leader, 65536)
        self.seen = (self.seen + got)[-65536:]
        return got

    def drain(self, seconds: float) -> None:
        """Read what it draws for `seconds`."""
        until = time.perf_counter() + seconds
        while (left := until - time.perf_counter()) > 0:
            self.read(left)

    def wait_for(self, marker: bytes, timeout: float = 30) -> float:
        """When `marker` was drawn (perf_counter)."""
        deadline = time.perf_counter() + timeout
        while marker not in self.seen:
            if time.perf_counter() > deadline:
                raise TimeoutError(
                    f"never drew {marker!r} in {timeout:.0f} s; its last text: {self.last_text()!r}"
                )
            self.read(0.05)
        return time.perf_counter()

    def last_text(self, chars: int = 600) -> str:
        """The end of what it drew, escape sequences left out: what a failed wait saw."""
        text = ESCAPE_SEQUENCE.sub(" ", self.seen.decode(errors="replace"))
        return " ".join(text.split())[-chars:]

    def echo(self, key: str, timeout: float = 5) -> float:
        """Type `key` (one that nothing else draws); seconds until it is drawn."""
        self.seen = b""
        typed = time.perf_counter()
        os.write(self.leader, key.encode())
        self.wait_for(key.encode(), timeout)
        return time.perf_counter() - typed

    def cpu_seconds(self) -> float:
        """User and system CPU time it has used so far."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        os.close(self.leader)


def launch_until(
    argv: list[str],
    env: dict[str, str],
    marker: bytes,
    then: bytes | None = None,
    size: tuple[int, int] = (120, 40),
    timeout: float = 30,
    settle: float = 0.0,
) -> tuple[float, float, float]:
    """Start `argv` in a pseudo-terminal of `size`. Seconds until `marker` is drawn, seconds
    until `then` is drawn (the same when there is none), and the process's resident memory
    (MB) `settle` seconds after that (what it loads just after its first frame counts)."""
    started = time.perf_counter()
    terminal = Terminal(argv, env, size)
    try:
        marks = [terminal.wait_for(marker, timeout) - started]
        marks.append(terminal.wait_for(then or marker, timeout) - started)
        terminal.drain(settle)
        memory = rss_mb(terminal.proc.pid)
    finally:
        terminal.close()
    return marks[0], marks[1], memory


class StallMonitor:
    """The longest time the event loop was unable to run a 2 ms timer."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _watch(self) -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(0.002)
            self.longest = max(self.longest, time.perf_counter() - before - 0.002)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._watch())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()


@contextlib.contextmanager
def environment(env: dict[str, str]) -> Iterator[None]:
    """`env` as the process environment, for an app measured in this process (with a fresh
    heap: see fresh_heap)."""
    fresh_heap()
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


PYTHON = sys.executable


def app_terminal(env: dict[str, str]) -> Terminal:
    """byok-tui started as a user starts it, in a 120x40 terminal of its own, with no draft."""
    forget_drafts(env)
    return Terminal([PYTHON, "-m", "byok_tui"], env, (120, 40))


async def workers_done(app: Any) -> None:
    """Wait until no worker of `app` is running. A worker cancelled on the way counts as done:
    an exclusive worker is cancelled when a newer one of its group starts."""
    from textual.worker import WorkerCancelled

    while running := [worker for worker in app.workers if worker.is_running]:
        for worker in running:
            with contextlib.suppress(WorkerCancelled):
                await worker.wait()
