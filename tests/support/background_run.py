"""A program the suite starts as soon as its tests are collected, for a test that only reads
what it did: the benchmarks' smoke run, over a minute and mostly waiting on the terminals and
servers it starts, kept one of the workers idle for all that time (the machine ~15 % idle
while it ran). It now runs beside the workers, which go on with other tests.

Every worker collects every test; the first to make the run's folder (named by the run's id,
which all workers share) starts it. The program runs in the tests' isolation (its own
homes, the test keyring) and ends by itself (`timeout`), whatever becomes of the suite."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support.isolation import isolated_variables
from tests.support.snapshots import REPO_ROOT

LONGEST = 600  # seconds: the program is stopped then, and the test fails
_started: list[subprocess.Popen[bytes]] = []  # kept, so that none is said to be left running


@dataclass(frozen=True)
class Finished:
    status: int
    stdout: str
    stderr: str
    files: dict[str, str]  # what else it wrote in its folder, by name


def run_folder(name: str, run_id: str) -> Path:
    return Path(tempfile.gettempdir()) / f"byok-tui-{name}-{run_id}"


def start_once(folder: Path, argv: list[str]) -> None:
    """Start `argv` (in the repository, isolated) unless this run started it already."""
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        return  # another worker started it
    variables, unset = isolated_variables(folder)
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(variables)
    del env["BYOK_TUI_HOME"]  # each benchmark makes its own
    # The status is written last, whole (a rename): a reader never sees half of it.
    script = (
        f'timeout {LONGEST} "$@" >"$RUN/stdout" 2>"$RUN/stderr"; '
        'echo $? >"$RUN/status.new" && mv "$RUN/status.new" "$RUN/status"'
    )
    started = subprocess.Popen(
        ["/bin/sh", "-c", script, "sh", *argv],
        cwd=REPO_ROOT,
        env={**env, "RUN": str(folder)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # a worker's end (or ctrl+c) is not its end: it times out
    )
    _started.append(started)


def wait_for_end(folder: Path, timeout: float = LONGEST + 30) -> Finished:
    """What the program started in `folder` did, once it has ended."""
    status = folder / "status"
    deadline = time.monotonic() + timeout
    while not status.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"the program started in {folder} never ended")
        time.sleep(0.2)
    texts = {path.name: path.read_text() for path in folder.iterdir() if path.is_file()}
    finished = Finished(int(texts.pop("status")), texts.pop("stdout"), texts.pop("stderr"), texts)
    shutil.rmtree(folder, ignore_errors=True)
    return finished


def benchmarks_smoke_argv(folder: Path) -> list[str]:
    return [sys.executable, "-m", "benchmarks", "--quick", "--json", str(folder / "results.json")]
