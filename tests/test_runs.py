"""A run's draft is taken over by a later start only once that run has ended: it quit, its
process is gone, or the machine restarted since. A running byok-tui's draft is its own."""

from __future__ import annotations

import os
import subprocess
import sys

from byok_tui.core.runs import ENDED, has_ended, new_run


def test_a_run_of_this_process_is_running_until_it_says_it_quit() -> None:
    run = new_run()
    assert not has_ended(run)
    assert has_ended(run + ENDED)
    assert new_run() != run  # a second run of the app in one process has its own name


def test_a_run_whose_process_is_gone_has_ended() -> None:
    child = subprocess.run(
        [sys.executable, "-c", "from byok_tui.core.runs import new_run; print(new_run())"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert has_ended(child.stdout.strip())


def test_a_run_of_a_process_still_running_has_not_ended() -> None:
    with subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from byok_tui.core.runs import new_run; print(new_run(), flush=True)"
            "; import time; time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    ) as child:
        assert child.stdout is not None
        run = child.stdout.readline().strip()
        try:
            assert not has_ended(run)
        finally:
            child.kill()
    assert has_ended(run)


def test_a_run_from_another_boot_or_not_named_by_a_run_has_ended() -> None:
    own = new_run().rsplit(":", 1)[1]
    assert has_ended(f"another-boot:{os.getpid()}:{own}")
    assert has_ended("imported from elsewhere")
    assert has_ended("")
