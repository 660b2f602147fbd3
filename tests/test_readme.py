"""The README and the guides in docs/ stay true: the tests they name exist, the pages the
README links to are there, and CI runs the Quickstart's test command."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
GUIDES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks/README.md"]


def test_every_test_the_guides_name_exists() -> None:
    """The security model's table names the test that proves each promise, as do others."""
    text = "\n".join(page.read_text() for page in GUIDES)
    missing = []
    for reference in set(re.findall(r"`(tests/[^`*]+?)`", text)):
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


def test_the_readme_is_short_and_every_page_it_links_to_is_there() -> None:
    assert len(README.splitlines()) <= 250
    links = re.findall(r"\]\(([^)#]+\.md)\)", README)
    assert links, "the README links to its guides"
    assert [link for link in links if not (ROOT / link).exists()] == []
