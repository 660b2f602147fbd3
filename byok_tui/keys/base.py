"""What every key store backend shares: entry names, normalisation, masking, errors."""

from __future__ import annotations

import logging
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable
from pathlib import Path

from byok_tui.core.errors import ByokError, ErrorKind
from byok_tui.core.key_text import check_key
from byok_tui.core.key_text import normalize_key as normalize_key  # keys' public name for it
from byok_tui.core.redaction import remember_secret

log = logging.getLogger(__name__)

ENTRY_PREFIX = "app-apikey-"
# A labelled key's entry is the default entry, a colon and the label: no provider id holds a
# colon, so `app-apikey-openai:work` can never be another provider's default entry.
LABEL_SEPARATOR = ":"
DEFAULT_LABEL = "default"  # what the CLI calls the key under `app-apikey-<provider id>`
# The entry that indexes labels, commands and failover (keys/index.py): text, not a key, so
# never remembered for redaction (its pieces would be scrubbed from everything shown).
INDEX_ENTRY = "app-keyindex"
_LABEL = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")


def entry_name(provider_id: str, label: str = "") -> str:
    """The store entry for a provider's key: `app-apikey-<provider id>` for its default key
    (the name the browser version uses, so that the same names mean the same keys), and
    `app-apikey-<provider id>:<label>` for a labelled one."""
    suffix = f"{LABEL_SEPARATOR}{label}" if label and label != DEFAULT_LABEL else ""
    return f"{ENTRY_PREFIX}{provider_id}{suffix}"


def fingerprint(key: str) -> str:
    """A short hash that tells one key from another in the key health table: from it the key
    cannot be recovered, and no piece of the key is in it."""
    import hashlib

    return hashlib.sha256(f"byok-tui key fingerprint\0{key}".encode()).hexdigest()[:16]


def check_label(raw: str) -> str:
    """A key's label as typed, lower-cased; ByokError when it is not 1-32 letters, digits,
    `-` or `_` starting with a letter or digit."""
    label = raw.strip().lower()
    if not _LABEL.fullmatch(label):
        raise ByokError(
            f"{raw.strip()!r} is not a key label",
            remedy="A label is 1-32 letters, digits, '-' or '_', starting with a letter or "
            "digit (for example: work).",
        )
    return label


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

    def get_text(self, entry: str) -> str | None:
        """An entry that holds text which is not a key (the key index): not remembered as a
        secret, since it is shown."""
        return self._read(entry) or None

    def set_text(self, entry: str, text: str) -> None:
        """Write an entry that holds text which is not a key; "" removes it."""
        if text:
            self._write(entry, text)
        else:
            self._remove(entry)

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
