"""What every key store backend shares: entry names, normalisation, masking, errors."""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Iterable
from pathlib import Path

from byok_tui.errors import ByokError, ErrorKind
from byok_tui.key_text import check_key
from byok_tui.key_text import normalize_key as normalize_key  # keys' public name for it
from byok_tui.redaction import remember_secret

log = logging.getLogger(__name__)

ENTRY_PREFIX = "app-apikey-"


def entry_name(provider_id: str) -> str:
    """The store entry for a provider's global key: `app-apikey-<provider id>` (the name the
    browser version uses, so that the same names mean the same keys)."""
    return f"{ENTRY_PREFIX}{provider_id}"


def mask_key(key: str) -> str:
    """A form safe to show: at most the first 4 and last 4 characters, fewer for short keys."""
    if len(key) >= 20:
        return f"{key[:4]}…{key[-4:]}"
    if len(key) >= 12:
        return f"{key[:2]}…{key[-2:]}"
    return "•" * 6


class KeyStoreError(ByokError):
    """The key store cannot be read or written."""

    kind = ErrorKind.KEY_STORE


class KeyFileCorruptError(KeyStoreError):
    """keys.json exists but is not what byok-tui writes; it is left untouched."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        super().__init__(f"cannot read the key file {path}: {problem}")


class KeyStore(ABC):
    """A place that keeps keys under entry names. Values are trimmed on save and refused if a
    character left is not printable ASCII (key_text.check_key); their format is not checked."""

    def __init__(self) -> None:
        # Things the user should be told (for example: permissions were tightened).
        self.notices: list[str] = []

    @property
    @abstractmethod
    def location(self) -> str:
        """Where the keys are kept, in words for `byok-tui keys path`."""

    @abstractmethod
    def _read(self, entry: str) -> str | None: ...

    @abstractmethod
    def _write(self, entry: str, value: str) -> None: ...

    @abstractmethod
    def _remove(self, entry: str) -> bool: ...

    def get(self, entry: str) -> str | None:
        value = self._read(entry)
        remember_secret(value)
        return value or None

    def get_many(self, entries: Iterable[str]) -> dict[str, str]:
        """The set entries among `entries` (backends may read them in one go)."""
        found = {}
        for entry in entries:
            value = self.get(entry)
            if value:
                found[entry] = value
        return found

    def set(self, entry: str, raw_value: str) -> bool:
        """Save a key, trimmed; KeyCharacterError (nothing saved) if it holds a character no
        key has. An empty value removes the entry.

        Returns True when a key is stored afterwards.
        """
        value = check_key(raw_value)
        if not value:
            self.delete(entry)
            return False
        remember_secret(value)
        self._write(entry, value)
        log.debug("saved %s in %s", entry, self.location)
        return True

    def delete(self, entry: str) -> bool:
        """Remove an entry; True when there was one."""
        removed = self._remove(entry)
        log.debug("removed %s from %s: %s", entry, self.location, removed)
        return removed
