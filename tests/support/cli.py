"""Run `byok-tui` as a real subprocess, with the environment the isolation fixture set."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping


def run_cli(
    *args: str,
    stdin: str | None = "",
    env: Mapping[str, str] | None = None,
    timeout: float = 60,
    encoding: str | None = None,  # of the child's output, when it is not the locale's
) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "byok_tui", *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding=encoding,
        env=full_env,
        timeout=timeout,
        check=False,
    )
