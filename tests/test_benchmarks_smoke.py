"""The benchmarks work (smoke mode: tiny sizes, one run). Never a check of speed: that is
what `python -m benchmarks` reports, with ratios against baselines from the same run."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.support.background_run import wait_for_end

# Beside other tests: in smoke mode no figure is judged, and what a benchmark waits for has
# room to spare on a loaded machine (30 s for a screen to show, 5 s for a key's echo).


def test_every_benchmark_runs_and_reports(benchmarks_smoke_run: Path) -> None:
    """`python -m benchmarks --quick` ends with status 0 and reports every benchmark. Started
    as soon as the tests were collected (tests/support/background_run.py): it runs beside
    them, and this test reads what it did."""
    result = wait_for_end(benchmarks_smoke_run)
    assert result.status == 0, result.stderr[-2000:]
    report = json.loads(result.files["results.json"])
    assert report["quick"] is True
    assert [r["number"] for r in report["results"]] == list(range(1, 17))
    for row in report["results"]:
        assert row["figure"]
        assert row["target"]
    assert "ratio" in result.stdout
    memory = next(r for r in report["results"] if r["number"] == 6)
    assert "the libraries it has loaded by then" in memory["figure"]  # the floor, measured
    assert "its own modules too, nothing of them run" in memory["figure"]  # and with its code


def test_the_benchmarks_database_shows_every_message_it_wrote(tmp_path: Path) -> None:
    """Written with plain SQL: each message follows the one before it, so a benchmark opens
    a conversation of the size it says, not an empty one."""
    from benchmarks.support import make_home
    from byok_tui.storage.store import Store

    make_home(tmp_path, 2, 30)
    store = Store(tmp_path / "data" / "byok-tui.sqlite3")
    for conversation in store.conversations(store.bots()[0].id):
        assert len(store.messages(conversation.id)) == 30


def test_a_reported_percentile_lies_between_the_fewest_figures_least_and_greatest() -> None:
    """A 95th percentile of a few echoes is never above their maximum (an extrapolating
    formula reported 103 ms against a maximum of 63 ms)."""
    from benchmarks.support import percentile

    for figures in ([0.0627, 0.0117, 0.009], [0.01], [0.005, 0.2], [0.3, 0.1, 0.2, 0.4, 0.25]):
        assert min(figures) <= percentile(figures, 95) <= max(figures)
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 50) == 3.0


@pytest.mark.skipif(not shutil.which("tmux"), reason="tmux is not installed")
def test_a_screen_that_never_shows_says_whether_the_program_still_drew_or_worked(
    tmp_path: Path,
) -> None:
    """A benchmark that times out waiting for a screen says what was there, and whether in
    the second after the program drew anything or used the CPU: a frozen app and a key that
    went elsewhere look alike on one capture."""
    from benchmarks.tmux_terminal import TmuxTerminal

    terminal = TmuxTerminal(
        [sys.executable, "-c", "print('ready', flush=True); import time; time.sleep(30)"],
        dict(os.environ),
        (40, 5),
        tmp_path,
    )
    try:
        terminal.wait_for("ready", timeout=10)
        with pytest.raises(TimeoutError) as raised:
            terminal.wait_for("never", timeout=0.1)
    finally:
        terminal.close()
    said = str(raised.value)
    assert "on screen: 'ready" in said
    assert "1 s later the screen was the same" in said
    assert "0.00 s of CPU meanwhile" in said
