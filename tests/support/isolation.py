"""The environment every test runs in, and every program a test starts: its own BYOK_TUI_HOME,
HOME and XDG folders under one folder, the test keyring, and no provider key or byok-tui
setting from the developer's environment."""

from __future__ import annotations

from pathlib import Path

from byok_tui.core.registry import providers
from tests.support.snapshots import REPO_ROOT

UNSET = ("BYOK_TUI_KEYSTORE", "BYOK_TUI_LOG", "BYOK_TEST_KEYRING_FAIL", "OLLAMA_HOST")


def isolated_variables(folder: Path) -> tuple[dict[str, str], list[str]]:
    """(the variables to set, the names to unset) for a run kept under `folder`; makes the
    user's home there."""
    user_home = folder / "user-home"
    user_home.mkdir(exist_ok=True)
    variables = {
        "BYOK_TUI_HOME": str(folder / "byok-home"),
        "HOME": str(user_home),
        "XDG_CONFIG_HOME": str(user_home / ".config"),
        "XDG_DATA_HOME": str(user_home / ".local/share"),
        "XDG_STATE_HOME": str(user_home / ".local/state"),
        "XDG_CACHE_HOME": str(user_home / ".cache"),
        "PYTHON_KEYRING_BACKEND": "tests.support.isolated_keyring.IsolatedKeyring",
        "BYOK_TEST_KEYRING_FILE": str(folder / "test-keyring.json"),
        "PYTHONPATH": str(REPO_ROOT),
    }
    unset = [*UNSET, *(name for provider in providers() for name in provider.env_vars)]
    return variables, unset
