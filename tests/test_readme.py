"""The README stays true: the tests it names exist, and CI runs its Quickstart test command."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_every_test_the_security_model_names_exists() -> None:
    missing = []
    for reference in set(re.findall(r"`(tests/[^`*]+?)`", README)):
        path, _, name = reference.partition("::")
        file = ROOT / path
        if not file.exists() or (name and f"def {name}(" not in file.read_text()):
            missing.append(reference)
    assert missing == []


def test_the_quickstart_has_two_commands_and_ci_runs_the_test_one() -> None:
    quickstart = README.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```sh\n(.+?)\n```", quickstart)
    assert len(commands) == 2
    assert commands[0].endswith(".venv/bin/byok-tui")
    assert "pytest" in commands[1]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "quickstart-tests" in ci  # .ci/run reads the command from the README itself
