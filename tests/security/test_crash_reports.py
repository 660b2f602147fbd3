"""A crash never prints or saves a key, shows no local variables, and exits non-zero."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

from byok_tui.core.crash import crash_report
from byok_tui.core.paths import app_paths
from byok_tui.core.redaction import remember_secret
from tests.support.cli import run_cli
from tests.support.keys import FAKE_KEYS

# Not shaped like a Google key, so only the remembered-secret layer can hide it.
GOOGLE_KEY = "odd-google-key-value-0042"


def test_an_app_crash_prints_a_redacted_report_without_locals_and_exits_1() -> None:
    assert run_cli("keys", "set", "google", stdin=GOOGLE_KEY).returncode == 0
    result = subprocess.run(
        [sys.executable, "-m", "tests.support.crashing_app"],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 1
    assert "RuntimeError: provider call failed" in output
    assert "in on_mount" in output  # a real traceback, down to the failing frame
    assert GOOGLE_KEY not in output
    assert "headers = " not in output  # Rich's locals panel would show `headers = {...}`
    saved = list(app_paths().crash_dir.glob("crash-*.txt"))
    assert len(saved) == 1
    assert f"saved to {saved[0]}" in output
    assert stat.S_IMODE(saved[0].stat().st_mode) == 0o600
    report = saved[0].read_text()
    assert "RuntimeError: provider call failed" in report
    assert GOOGLE_KEY not in report


def test_a_crash_in_a_worker_keeps_its_traceback_with_files_and_lines() -> None:
    assert run_cli("keys", "set", "google", stdin=GOOGLE_KEY).returncode == 0
    result = subprocess.run(
        [sys.executable, "-m", "tests.support.crashing_app", "worker"],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
        check=False,
    )
    assert result.returncode == 1
    report = next(app_paths().crash_dir.glob("crash-*.txt")).read_text()
    for shown in (result.stderr, report):
        assert "Traceback (most recent call last)" in shown
        assert 'crashing_app.py", line' in shown  # the file and line that raised
        assert "in read_a_malformed_database" in shown
        assert "in _open_context" in shown  # the app's own worker, down to the failing frame
        assert "DatabaseError: database disk image is malformed" in shown
        assert GOOGLE_KEY not in shown


def test_the_crash_report_text_is_redacted() -> None:
    remember_secret(GOOGLE_KEY)
    try:
        raise ValueError(f"{GOOGLE_KEY} and {FAKE_KEYS['openai']}")
    except ValueError as error:
        report = crash_report(error)
    assert "ValueError" in report
    assert GOOGLE_KEY not in report
    assert FAKE_KEYS["openai"] not in report
