"""Benchmarks 14 and 15: the app where users meet it, in a real terminal emulator (tmux,
120x40), against plain baselines run in the same terminal in the same run.

14. A 2,000-token reply paced at 200 tokens a second: the app's CPU from Enter until the
    reply is drawn, two messages a start, three starts; against a minimal httpx printer
    (and llm's CLI, when it is installed) printing the same stream. Also: the bytes the app
    wrote to the terminal for the reply, and the runs of text among them that rewrote cells
    with what they already showed (benchmarks/terminal_writes.py: none is the target), and a
    key's echo while a reply streams against one typed when idle.
15. A message sent the moment the composer appears: seconds from Enter until the request
    reaches the provider; the composer's time on screen against a minimal Textual app; the
    app's memory 2 s after the composer appeared, against the minimal app's 2 s after its
    first frame.
"""

from __future__ import annotations

import shutil
import statistics
import time
from pathlib import Path

from benchmarks.server import bench_server
from benchmarks.support import PYTHON, Result, forget_drafts, make_home, settle
from benchmarks.terminal_writes import rewritten_runs
from benchmarks.tmux_terminal import TmuxTerminal

HERE = Path(__file__).resolve().parent
SIZE = (120, 40)
ECHO_KEYS = "ЖЗИЙКЛМНПФЦЧШЩЭЮЯ"  # drawn by nothing but the composer


def _plain_cpu(argv: list[str], env: dict[str, str], report: Path, work: Path) -> float:
    """A baseline printer's CPU for the stream, run in the terminal until it ends."""
    terminal = TmuxTerminal(argv, env, SIZE, work)
    try:
        deadline = time.perf_counter() + 120
        while not terminal.ended() and time.perf_counter() < deadline:
            time.sleep(0.1)
    finally:
        terminal.close()
    return float(report.read_text())


def _reply_round(
    terminal: TmuxTerminal, server: object, typing: bool
) -> tuple[float, bytes, list[float]]:
    """One paced reply in the app: its CPU from Enter until the reply was drawn, what it
    wrote meanwhile, and (with `typing`) the echo of a key typed every 0.4 s."""
    terminal.type("hello")
    terminal.wait_for("tokens in")  # the draft's estimate, the typing's own work, is done
    time.sleep(0.3)
    count = len(server.last_byte)  # type: ignore[attr-defined]
    echoes: list[float] = []
    keys = iter(ECHO_KEYS * 8)
    with terminal.recording() as written:
        cpu = terminal.cpu_seconds()
        terminal.press("Enter")
        while len(server.last_byte) == count:  # type: ignore[attr-defined]
            if typing and len(server.first_byte) > count:  # type: ignore[attr-defined]
                echoes.append(terminal.echo(next(keys)))
            time.sleep(0.4)
        time.sleep(settle(0.3))  # the last text drawn, the line under it updated
        cpu = terminal.cpu_seconds() - cpu
    if typing:  # what was typed meanwhile goes, before the next message
        terminal.press("C-u")
    return cpu, written.read_bytes(), echoes


def _no_tmux(number: int, what: str) -> Result:
    return Result(number, what, "not run: tmux is not installed", "-", None, "-", None)


def bench_terminal_stream(work: Path, quick: bool) -> Result:
    if shutil.which("tmux") is None:
        return _no_tmux(14, "in tmux: a paced reply")
    tokens, rate = (200, 200.0) if quick else (2_000, 200.0)
    env = make_home(work / "tmux-paced", 1, 2)
    with bench_server() as server:
        server.reply_with(tokens, rate)
        env["BYOK_TUI_OPENAI_BASE_URL"] = f"{server.base_url}/v1"
        url = f"{server.base_url}/v1/chat/completions"
        report = work / "tmux-plain-cpu.txt"
        rounds = 1 if quick else 3
        printer = [PYTHON, str(HERE / "plain_consumer.py"), url, str(report)]
        plain = [_plain_cpu(printer, env, report, work / "tmux") for _ in range(rounds)]
        llm = shutil.which("llm")  # llm's own CLI, when the machine has it (configured apart)
        cpus: list[float] = []
        first: list[float] = []
        written: list[bytes] = []
        echoes: list[float] = []
        idle: list[float] = []
        for _ in range(rounds):
            forget_drafts(env)
            terminal = TmuxTerminal([PYTHON, "-m", "byok_tui"], env, SIZE, work / "tmux")
            try:
                terminal.wait_for("Enter sends")
                time.sleep(settle(1.0))  # the start-up's own work is over
                for number in range(2):
                    cpu, data, _ = _reply_round(terminal, server, typing=False)
                    cpus.append(cpu)
                    written.append(data)
                    if number == 0:
                        first.append(cpu)
                with terminal.recording():
                    for key in ECHO_KEYS[:6]:
                        idle.append(terminal.echo(key))
                        time.sleep(settle(0.2))
                terminal.press("C-u")
                echoes += _reply_round(terminal, server, typing=True)[2]
            finally:
                terminal.close()
    app_cpu, plain_cpu = statistics.median(cpus), statistics.median(plain)
    sizes = [len(data) for data in written]
    rewritten = rewritten_runs(written, SIZE)
    idle_echo, echo_max = statistics.median(idle), max(echoes) if echoes else 0.0
    ratio = app_cpu / plain_cpu if plain_cpu else None
    return Result(
        14,
        f"in tmux: a {tokens:,}-token reply paced at {rate:.0f}/s, app CPU; key echo",
        f"CPU {app_cpu:.2f} s (median of {len(cpus)}: "
        f"{', '.join(f'{cpu:.2f}' for cpu in cpus)}; the first message of a start "
        f"{statistics.median(first):.2f} s); written to the terminal "
        f"{statistics.median(sizes) / 1024:.0f} KiB ({statistics.median(sizes) / tokens:.0f} "
        "bytes a token; "
        f"{rewritten.said()}); "
        f"echo meanwhile median {statistics.median(echoes) * 1000:.1f} ms, "
        f"max {echo_max * 1000:.1f} ms",
        f"httpx printer CPU {plain_cpu:.2f} s"
        + ("" if llm else " (llm not installed)")
        + f"; idle echo {idle_echo * 1000:.1f} ms",
        ratio,
        "CPU <= 8x the httpx printer (llm absent); no run rewritten unchanged;"
        " echo max <= idle + 10 ms",
        ratio is not None
        and ratio <= 8
        and rewritten.unchanged == 0
        and echo_max <= idle_echo + 0.010,
    )


def bench_terminal_start(work: Path, quick: bool) -> Result:
    if shutil.which("tmux") is None:
        return _no_tmux(15, "in tmux: a send as the composer appears")
    env = make_home(work / "tmux-start", 20 if quick else 1000, 4 if quick else 20)
    rounds = 1 if quick else 5
    minimal_ready: list[float] = []
    minimal_memory: list[float] = []
    with bench_server() as server:
        server.reply_with(20)
        env["BYOK_TUI_OPENAI_BASE_URL"] = f"{server.base_url}/v1"
        for _ in range(rounds):
            terminal = TmuxTerminal(
                [PYTHON, str(HERE / "minimal_app.py")], env, SIZE, work / "tmux"
            )
            try:
                minimal_ready.append(
                    terminal.wait_for("minimal-app-ready", every=0.002) - terminal.started
                )
                time.sleep(settle(2.0))
                minimal_memory.append(terminal.resident_mb())
            finally:
                terminal.close()
        ready: list[float] = []
        sends: list[float] = []
        memory: list[float] = []
        for _ in range(rounds):
            forget_drafts(env)
            count = len(server.arrivals)
            terminal = TmuxTerminal([PYTHON, "-m", "byok_tui"], env, SIZE, work / "tmux")
            try:
                shown = terminal.wait_for("Enter sends", every=0.002)
                ready.append(shown - terminal.started)
                terminal.type("hi")
                entered = time.perf_counter()
                terminal.press("Enter")
                deadline = entered + 30
                while len(server.arrivals) == count and time.perf_counter() < deadline:
                    time.sleep(0.001)
                sends.append(server.arrivals[-1] - entered)
                time.sleep(max(0.0, shown + settle(2.0) - time.perf_counter()))
                memory.append(terminal.resident_mb())
            finally:
                terminal.close()
    send, composer = statistics.median(sends), statistics.median(ready)
    base_ready, base_memory = statistics.median(minimal_ready), statistics.median(minimal_memory)
    app_memory = statistics.median(memory)
    met = send <= 0.15 and composer <= 1.2 * base_ready and app_memory <= 1.5 * base_memory
    return Result(
        15,
        "in tmux: a message sent as the composer appears; composer; memory 2 s after",
        f"Enter -> request {send * 1000:.0f} ms (median of {len(sends)}: "
        f"{', '.join(f'{s * 1000:.0f}' for s in sends)}); composer on screen "
        f"{composer * 1000:.0f} ms ({composer / base_ready:.2f}x); memory {app_memory:.0f} MB "
        f"({app_memory / base_memory:.2f}x)",
        f"minimal Textual app: on screen {base_ready * 1000:.0f} ms, {base_memory:.0f} MB",
        send,
        "send <= 0.15 s; composer <= 1.2x; memory <= 1.5x",
        met,
    )
