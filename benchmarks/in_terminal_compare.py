"""Benchmark 16: compare in a real terminal emulator (tmux, 120x40). Three paced replies at
once (F5, three targets) against one paced reply sent as usual, in the same app, the same
run: the app's CPU from Enter until the last reply's last byte (plus the same settling),
and the bytes written to the terminal meanwhile (no key typed, as for the one). Then, in a
compare of its own, how soon a key typed in the compare's composer is drawn while the three
stream, against the chat composer's echo with nothing streaming.
"""

from __future__ import annotations

import shutil
import statistics
import time
from pathlib import Path

from benchmarks.in_terminal import ECHO_KEYS, SIZE, _reply_round
from benchmarks.server import bench_server
from benchmarks.support import PYTHON, Result, forget_drafts, make_home, percentile, settle
from benchmarks.terminal_writes import rewritten_runs
from benchmarks.tmux_terminal import TmuxTerminal

TARGETS = "openai:gpt-5.4-mini, groq:llama-3.3-70b-versatile, mistral:mistral-small-latest"
ASKED = "Compared: hello"  # the compare screen's first line: only there


def _compare_round(
    terminal: TmuxTerminal, server: object, typing: bool
) -> tuple[float, bytes, list[float]]:
    """Three paced replies at once: CPU from Enter until the last was drawn, bytes written;
    with `typing`, how long a key typed in the compare's composer every 0.4 s meanwhile took
    to be drawn (the CPU of a round with typing counts the typing too: it is not compared)."""
    terminal.type("hello")
    terminal.wait_for("│ hello ")  # in the composer (its estimate follows)
    terminal.press("F5")
    terminal.wait_for("Compare with")
    terminal.press("C-u")  # the targets proposed go; those typed then, read together, stay
    terminal.type(TARGETS)
    time.sleep(0.3)
    count = len(server.last_byte)  # type: ignore[attr-defined]
    echoes: list[float] = []
    keys = iter(ECHO_KEYS * 20)
    with terminal.recording() as written:
        cpu = terminal.cpu_seconds()
        terminal.press("Enter")
        # The dialog has closed and the columns are open (or this says what is on screen).
        terminal.wait_for(ASKED, every=0.01 if typing else 0.1)
        if typing:
            terminal.type("c")  # to the compare's composer
        deadline = time.perf_counter() + 120
        while len(server.last_byte) < count + 3:  # type: ignore[attr-defined]
            if time.perf_counter() > deadline:
                raise TimeoutError(f"the three replies never ended: {terminal.screen()!r}")
            if typing and len(server.first_byte) >= count + 3:  # type: ignore[attr-defined]
                echoes.append(terminal.echo(next(keys)))
            time.sleep(0.4)
        time.sleep(settle(0.3))  # the last text drawn
        cpu = terminal.cpu_seconds() - cpu
        recorded = written.read_bytes()
    time.sleep(0.5)
    for _ in range(10):  # back to the chat, with what was typed; a reply the app has not
        terminal.press("Escape")  # yet seen end is stopped by the first Escape, not left
        if terminal.gone_within(ASKED, timeout=2):
            break
    terminal.wait_for("Enter sends")  # (or this says what is on screen)
    terminal.press("C-u")
    time.sleep(0.5)
    return cpu, recorded, echoes


def bench_terminal_compare(work: Path, quick: bool) -> Result:
    if shutil.which("tmux") is None:
        return Result(
            16, "in tmux: compare", "not run: tmux is not installed", "-", None, "-", None
        )
    tokens, rate = (200, 200.0) if quick else (2_000, 200.0)
    env = make_home(work / "tmux-compare", 1, 2)
    single: list[float] = []
    three: list[float] = []
    recordings: list[bytes] = []
    busy: list[float] = []
    idle: list[float] = []
    with bench_server() as server:
        server.reply_with(tokens, rate)
        for provider, path in (("OPENAI", "v1"), ("GROQ", "openai/v1"), ("MISTRAL", "v1")):
            env[f"BYOK_TUI_{provider}_BASE_URL"] = f"{server.base_url}/{path}"
        for _ in range(1 if quick else 2):
            forget_drafts(env)
            terminal = TmuxTerminal([PYTHON, "-m", "byok_tui"], env, SIZE, work / "tmux")
            try:
                terminal.wait_for("Enter sends")
                time.sleep(settle(1.0))  # the start-up's own work is over
                single.append(_reply_round(terminal, server, typing=False)[0])
                cpu, recorded, _ = _compare_round(terminal, server, typing=False)
                three.append(cpu)
                recordings.append(recorded)
                busy += _compare_round(terminal, server, typing=True)[2]
                with terminal.recording():  # the composer's echo, nothing streaming
                    idle += [terminal.echo(key) for key in ECHO_KEYS[:4]]
                terminal.press("C-u")
            finally:
                terminal.close()
    one, all_three = statistics.median(single), statistics.median(three)
    ratio = all_three / one if one else None
    switch = max(busy) if busy else 0.0
    calm_median = statistics.median(idle) if idle else 0.0
    return Result(
        16,
        f"in tmux: compare, three {tokens:,}-token replies paced at {rate:.0f}/s at once",
        f"CPU {all_three:.2f} s (of {len(three)}: {', '.join(f'{c:.2f}' for c in three)}); "
        f"written {statistics.median(len(r) for r in recordings) / 1024:.0f} KiB"
        f" ({rewritten_runs(recordings, SIZE).said()}); a key typed while they "
        f"stream drawn in: max {switch * 1000:.1f} ms"
        + (
            f", 95th percentile {percentile(busy, 95) * 1000:.1f} ms, "
            f"median {statistics.median(busy) * 1000:.1f} ms"
            if len(busy) > 1
            else ""
        ),
        f"one paced reply sent as usual: CPU {one:.2f} s; idle echo {calm_median * 1000:.1f} ms",
        ratio,
        "CPU of three <= 2x one; the key meanwhile <= idle + 10 ms",
        ratio is not None and ratio <= 2 and switch <= calm_median + 0.010,
    )
