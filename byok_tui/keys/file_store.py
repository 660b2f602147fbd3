"""The file key store: `keys.json`, a JSON object of entry name → key.

The folder is 0700 and the file 0600. Every change is a read-modify-write under an exclusive
lock, written to a temporary file, fsynced and renamed over the old one, so two processes
setting different keys never lose either and a reader never sees half a file. A file that is
not what byok-tui writes is reported and never overwritten.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from byok_tui.core.paths import ensure_private_dir, read_bounded
from byok_tui.core.redaction import remember_secret
from byok_tui.core.system import lock_exclusively
from byok_tui.keys.base import INDEX_ENTRY, KeyFileCorruptError, KeyStore, KeyStoreError

# Far more keys than anyone has, with their labels; a larger file is not one byok-tui wrote.
LARGEST_KEY_FILE = 4 * 1024 * 1024


class FileKeyStore(KeyStore):
    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self._lock_path = path.with_name(path.name + ".lock")

    @property
    def location(self) -> str:
        return f"file {self.path}"

    # Reading -------------------------------------------------------------------------------

    def _tighten_file(self) -> None:
        try:
            mode = self.path.stat().st_mode & 0o777
        except FileNotFoundError:
            return
        if mode & 0o077:
            self.path.chmod(0o600)
            self.notices.append(
                f"{self.path} could be read by other users (mode {mode:o}); "
                "its permissions were set to 600."
            )

    def load(self) -> dict[str, str]:
        """Every entry in the file; {} when there is no file yet."""
        try:
            self._tighten_file()
            raw = read_bounded(self.path, LARGEST_KEY_FILE)  # not a FIFO or a device
        except FileNotFoundError:
            return {}
        except OSError as error:
            raise KeyFileCorruptError(self.path, error.strerror or type(error).__name__) from None
        data = _decode(self.path, raw)
        for name, value in data.items():
            if name != INDEX_ENTRY:
                remember_secret(value)
        return data

    def _read(self, entry: str) -> str | None:
        return self.load().get(entry)

    def get_many(self, entries: Iterable[str]) -> dict[str, str]:
        data = self.load()
        return {entry: data[entry] for entry in entries if data.get(entry)}

    # Writing -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            if ensure_private_dir(self.path.parent):
                self.notices.append(f"{self.path.parent} was readable by others; set to 700.")
            fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as error:
            raise KeyStoreError(
                f"cannot open the key folder {self.path.parent}: {error.strerror}"
            ) from None
        try:
            lock_exclusively(fd)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _update(self, change: Callable[[dict[str, str]], bool]) -> bool:
        with self._locked():
            data = self.load()  # raises on a corrupt file, which is then left as it is
            changed = change(data)
            if changed:
                self._replace(data)
            return changed

    def _replace(self, data: dict[str, str]) -> None:
        payload = (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8")
        folder = self.path.parent
        fd, temp_name = tempfile.mkstemp(prefix=".keys-", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as file:  # mkstemp creates it 0600
                file.write(payload)
                file.flush()
                os.fsync(file.fileno())
            Path(temp_name).replace(self.path)
        except OSError as error:
            with contextlib.suppress(OSError):
                Path(temp_name).unlink()
            reason = "the disk is full" if error.errno == errno.ENOSPC else error.strerror
            raise KeyStoreError(f"cannot save the key file {self.path}: {reason}") from None
        _fsync_dir(folder)

    def _write(self, entry: str, value: str) -> None:
        def put(data: dict[str, str]) -> bool:
            if data.get(entry) == value:
                return False
            data[entry] = value
            return True

        self._update(put)

    def _remove(self, entry: str) -> bool:
        return self._update(lambda data: data.pop(entry, None) is not None)


def _decode(path: Path, raw: bytes) -> dict[str, str]:
    # The messages below describe what is wrong without quoting the file: it holds keys.
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise KeyFileCorruptError(path, "it is not UTF-8 text") from None
    if not text.strip():
        raise KeyFileCorruptError(path, "it is empty")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise KeyFileCorruptError(
            path, f"it is not valid JSON ({error.msg} at line {error.lineno}, column {error.colno})"
        ) from None
    except RecursionError:
        raise KeyFileCorruptError(path, "it is nested too deeply to be a key file") from None
    if not isinstance(data, dict):
        raise KeyFileCorruptError(path, "it is not a JSON object of entry names and keys")
    for name, value in data.items():
        if not isinstance(value, str):
            raise KeyFileCorruptError(path, f"the entry {name!r} is not a string")
    return data


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
