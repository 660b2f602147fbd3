"""Structure promises: the core never imports Textual, and only the registry lists providers."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from byok_tui.registry import provider_ids

PACKAGE = Path(__file__).resolve().parent.parent / "byok_tui"

CORE_MODULES = [
    "byok_tui.keys",
    "byok_tui.keys.overview",
    "byok_tui.keys.file_store",
    "byok_tui.keys.keyring_store",
    "byok_tui.providers",
    "byok_tui.registry",
    "byok_tui.redaction",
    "byok_tui.logs",
    "byok_tui.markdown_blocks",
    "byok_tui.cli",
]


@pytest.mark.parametrize("module", CORE_MODULES)
def test_core_modules_import_neither_textual_nor_httpx(module: str) -> None:
    code = (
        f"import json, sys; import {module}; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('textual', 'httpx', 'keyring'))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert json.loads(result.stdout) == []


def test_no_module_lists_provider_ids_outside_the_registry() -> None:
    ids = "|".join(re.escape(i) for i in provider_ids())
    literal = re.compile(rf"""["'](?:{ids})["']""")
    offenders = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in PACKAGE.rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if literal.search(line)
    ]
    assert offenders == []


def test_the_registry_has_the_eight_key_providers_and_the_local_runtime() -> None:
    assert provider_ids() == (
        "anthropic",
        "openai",
        "xai",
        "google",
        "openrouter",
        "deepseek",
        "groq",
        "mistral",
        "ollama",
    )


def test_widgets_never_import_screens() -> None:
    """Widgets are the lower layer: a screen composes them and answers their messages."""
    importing = [
        path.name
        for path in (PACKAGE / "widgets").glob("*.py")
        if re.search(r"^\s*(from|import) byok_tui\.screens\b", path.read_text(), re.MULTILINE)
    ]
    assert importing == []


def test_screens_and_widgets_reach_no_store() -> None:
    """The UI talks to the data service (app_data) only: no screen or widget imports the
    database, the key store or the services that open them."""
    lower = re.compile(r"^\s*(from|import) byok_tui\.(storage|keys|services)\b", re.MULTILINE)
    importing = [
        f"{path.parent.name}/{path.name}"
        for folder in ("screens", "widgets")
        for path in (PACKAGE / folder).glob("*.py")
        if lower.search(path.read_text())
    ]
    assert importing == []


@pytest.mark.parametrize(
    ("leaf", "with_it"),
    [
        ("byok_tui.records", ["byok_tui.key_records"]),  # the keys' records, loaded first
        ("byok_tui.key_records", []),
        ("byok_tui.registry", []),
    ],
)
def test_the_records_and_the_registry_are_leaves(leaf: str, with_it: list[str]) -> None:
    """Bots, conversations, messages and key states, and every fact about a provider, are
    data every layer may read: importing them runs no other part of byok-tui, so no import
    runs from a lower layer up."""
    code = (
        f"import json, sys; import {leaf}; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('byok_tui.'))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert json.loads(result.stdout) == sorted([leaf, *with_it])


def test_no_test_imports_from_a_conftest() -> None:
    """Helpers live in tests/support/; a conftest only declares fixtures."""
    tests = PACKAGE.parent / "tests"
    importing = [
        str(path.relative_to(tests))
        for path in tests.rglob("*.py")
        if re.search(r"^\s*(from|import) tests\.(\w+\.)*conftest\b", path.read_text(), re.MULTILINE)
    ]
    assert importing == []
