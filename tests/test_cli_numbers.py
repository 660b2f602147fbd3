"""Whole numbers on the command line are usage errors (exit 2, the option named) when they
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
