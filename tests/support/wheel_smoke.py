"""The wheel, installed into a virtual environment outside the source tree, starts and answers:
`--version`, `--help` and one `ask` against a loopback provider. Every data file the app reads
(the registry's TOML, the stylesheets) must be in the wheel for this to pass.

CI runs it (.ci/run) with the byok-tui of an environment that holds only the wheel:

    .venv/bin/python -m tests.support.wheel_smoke /path/to/venv/bin/byok-tui
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.support.provider_server import openai_reply, provider_server

KEY = "gsk_" + "W" * 52
SOURCE_TREE = Path(__file__).resolve().parents[2]


def check(said: subprocess.CompletedProcess[str], what: str, expected: str) -> None:
    if said.returncode != 0 or expected not in said.stdout:
        raise SystemExit(
            f"wheel smoke: {what} failed (status {said.returncode})\n"
            f"stdout: {said.stdout[-2000:]}\nstderr: {said.stderr[-2000:]}"
        )
    print(f"wheel smoke: {what}: ok")


def main(argv: list[str]) -> int:
    binary = Path(argv[1])
    python = binary.parent / "python"
    with tempfile.TemporaryDirectory() as home, provider_server() as server:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": home,
            "BYOK_TUI_HOME": str(Path(home) / "byok"),
            "BYOK_TUI_KEYSTORE": "file",  # no keyring on a headless machine
            "GROQ_API_KEY": KEY,
            "BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1",
        }

        def run(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                args, cwd=home, env=env, capture_output=True, text=True, timeout=60, check=False
            )

        where = run(str(python), "-c", "import byok_tui; print(byok_tui.__file__)")
        check(where, "the package imported", "byok_tui")
        if Path(where.stdout.strip()).resolve().is_relative_to(SOURCE_TREE):
            raise SystemExit(f"wheel smoke: byok_tui came from the source tree: {where.stdout}")
        check(run(str(binary), "--version"), "--version", "byok-tui ")
        check(run(str(binary), "--help"), "--help", "keys in the app")
        server.reply_with(openai_reply("Hello from the wheel"))
        asked = run(str(binary), "ask", "-p", "groq", "hi")
        check(asked, "ask against a loopback provider", "Hello from the wheel")
        (seen,) = server.requests
        if seen.header("authorization") != f"Bearer {KEY}":
            raise SystemExit("wheel smoke: ask did not send the key it was given")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
