"""A keyring backend for tests: a JSON file named by BYOK_TEST_KEYRING_FILE.

Selected with PYTHON_KEYRING_BACKEND so that neither the test process nor the subprocesses it
starts can touch the real user's keyring. BYOK_TEST_KEYRING_FAIL=1 makes every call raise, to
test how byok-tui reports a broken keyring.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import KeyringError, PasswordDeleteError


class IsolatedKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    def _path(self) -> Path:
        return Path(os.environ["BYOK_TEST_KEYRING_FILE"])

    def _check(self) -> None:
        if os.environ.get("BYOK_TEST_KEYRING_FAIL") == "1":
            raise KeyringError("the test keyring is locked")

    def _load(self) -> dict[str, str]:
        path = self._path()
        return json.loads(path.read_text()) if path.exists() else {}

    def get_password(self, service: str, username: str) -> str | None:
        self._check()
        return self._load().get(f"{service}/{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        self._check()
        data = self._load()
        data[f"{service}/{username}"] = password
        self._path().write_text(json.dumps(data))

    def delete_password(self, service: str, username: str) -> None:
        self._check()
        data = self._load()
        if data.pop(f"{service}/{username}", None) is None:
            raise PasswordDeleteError(username)
        self._path().write_text(json.dumps(data))
