"""The command line's edges: whole numbers are usage errors (exit 2, the option named) when they
are no number or out of range, never an OverflowError from the database."""

from __future__ import annotations

import pytest

from tests.support.cli import run_cli

HUGE = str(10**30)


@pytest.mark.parametrize(
    "command",
    [
        ("search", "x", "--limit", HUGE),
        ("search", "x", "--limit", "0"),
        ("export", "--markdown", "--conversation", HUGE),
        ("ask", "-p", "groq", "--max-tokens", HUGE, "hi"),
    ],
)
def test_a_number_out_of_range_is_a_usage_error(command: tuple[str, ...]) -> None:
    result = run_cli(*command, env={"GROQ_API_KEY": "gsk_" + "N" * 52})
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "crashed" not in result.stderr
    assert "--" in result.stderr  # the option is named


@pytest.mark.parametrize("command", [("keys", "list"), ("requests",), ("--help",)])
def test_a_reader_that_goes_away_is_a_quiet_exit(command: tuple[str, ...]) -> None:
    """`byok-tui requests | head -1`: the reader takes a line and goes while more is written."""
    import os
    import subprocess
    import sys

    from byok_tui.app_services.services import open_services, open_store
    from byok_tui.providers.types import RequestRecord

    store = open_store(open_services())
    for n in range(3000):
        record = RequestRecord(n, "groq", "chat", "POST", "api.groq.com", "/x", "global", None)
        store.ledger.record_request(record, None)
    store.close()
    child = subprocess.Popen(
        [sys.executable, "-m", "byok_tui", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.readline()
    child.stdout.close()  # the reader is gone while more is written
    said = child.stderr.read().decode()
    assert child.wait(timeout=60) == 0, said
    assert "Exception ignored" not in said and "BrokenPipeError" not in said, said
