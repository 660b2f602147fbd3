"""Structure promises: the core never imports Textual, and only the registry lists providers."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from byok_tui.core.registry import provider_ids

PACKAGE = Path(__file__).resolve().parent.parent / "byok_tui"

CORE_MODULES = [
    "byok_tui.keys",
    "byok_tui.keys.overview",
    "byok_tui.keys.file_store",
    "byok_tui.keys.keyring_store",
    "byok_tui.providers",
    "byok_tui.core.registry",
    "byok_tui.core.redaction",
    "byok_tui.core.logs",
    "byok_tui.widgets.markdown_blocks",
    "byok_tui.cli",
    "byok_tui.tools.servers",
    "byok_tui.tools.client",
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
    lower = re.compile(
        r"^\s*(from|import) byok_tui\.(storage|keys|app_services\.services)\b", re.MULTILINE
    )
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
        ("byok_tui.core.records", ["byok_tui.core.key_records"]),  # the keys' records, loaded first
        ("byok_tui.core.key_records", []),
        ("byok_tui.core.registry", []),
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
    assert json.loads(result.stdout) == sorted([leaf, *with_it, "byok_tui.core"])


def test_no_test_imports_from_a_conftest() -> None:
    """Helpers live in tests/support/; a conftest only declares fixtures."""
    tests = PACKAGE.parent / "tests"
    importing = [
        str(path.relative_to(tests))
        for path in tests.rglob("*.py")
        if re.search(r"^\s*(from|import) tests\.(\w+\.)*conftest\b", path.read_text(), re.MULTILINE)
    ]
    assert importing == []


# The layers, lowest first: a module imports only from its own layer or those below it. Every
# import counts, at module level, inside a function, or for type names only.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("byok_tui", "byok_tui.core", "byok_tui.compat")),
    ("keys", ("byok_tui.keys",)),  # the key store: knows nothing of providers
    ("providers", ("byok_tui.providers",)),  # the wire and the client, which reads keys
    ("storage", ("byok_tui.storage",)),  # keeps what providers said (usage, requests)
    ("spend", ("byok_tui.spend",)),
    ("tools", ("byok_tui.tools",)),  # MCP servers: the SDK loaded only when one is used
    ("chat", ("byok_tui.chat",)),
    ("app services", ("byok_tui.app_services",)),
    ("widgets", ("byok_tui.widgets",)),
    ("screens", ("byok_tui.screens",)),
    ("app", ("byok_tui.app",)),
    ("shell", ("byok_tui.cli",)),
    ("entry points", ("byok_tui.launch", "byok_tui.__main__")),
]
ENTRY_POINTS = {"__init__.py", "__main__.py", "app.py", "launch.py"}
# compat.py stays at the root: every reliance on a library's internals lives at that one
# well-known path, whichever layer leans on it.
ROOT_FILES = ENTRY_POINTS | {"compat.py"}
LONGEST_MODULE = 450  # lines; compat.py, the list of every touch point, aside


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imports_of(path: Path, known: dict[str, Path]) -> set[str]:
    """Every byok_tui module `path` imports, wherever the import stands."""
    import ast

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                found.add(name if name in known else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name in known}


def layer_of(module: str) -> int:
    matches = [
        number
        for number, (_, prefixes) in enumerate(LAYERS)
        for prefix in prefixes
        if module == prefix or (prefix != "byok_tui" and module.startswith(prefix + "."))
    ]
    assert matches, f"{module} is in no layer: add its package to LAYERS"
    return max(matches)


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(path, known) - {name} for name, path in known.items()}


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    """UI -> app services -> chat -> spend -> storage -> providers -> keys -> core: never up."""
    upward = [
        f"{module} ({LAYERS[layer_of(module)][0]}) imports {imported} "
        f"({LAYERS[layer_of(imported)][0]})"
        for module, imported_modules in sorted(import_graph().items())
        for imported in sorted(imported_modules)
        if layer_of(imported) > layer_of(module)
    ]
    assert upward == []


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or round a loop (Tarjan)."""
    order: dict[str, int] = {}
    lowest: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = lowest[module] = len(order)
        stack.append(module)
        for imported in sorted(graph[module]):
            if imported not in order:
                visit(imported)
                lowest[module] = min(lowest[module], lowest[imported])
            elif imported in stack:
                lowest[module] = min(lowest[module], order[imported])
        if lowest[module] == order[module]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return found


def test_no_import_circle() -> None:
    """Parts that need a connection or a screen take a narrow one (`Database`, `ChatHost`),
    never the module that imports them."""
    assert circles(import_graph()) == []


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]


def test_the_package_root_holds_only_entry_points_and_packages() -> None:
    assert {path.name for path in PACKAGE.glob("*.py")} == ROOT_FILES


def test_each_package_says_what_it_owns_and_what_it_may_import() -> None:
    silent = [
        package.name
        for package in PACKAGE.iterdir()
        if (package / "__init__.py").is_file()
        and not re.search(
            r"\b(may import|imports nothing|never imports?)\b",
            (package / "__init__.py").read_text(encoding="utf-8"),
            re.IGNORECASE,
        )
    ]
    assert silent == []


def test_no_module_is_longer_than_a_person_can_hold_in_mind() -> None:
    too_long = {
        str(path.relative_to(PACKAGE)): lines
        for path in PACKAGE.rglob("*.py")
        if path.name != "compat.py"
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > LONGEST_MODULE
    }
    assert too_long == {}
