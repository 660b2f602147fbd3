"""The database as the store's parts use it: one SQLite connection per thread (the app reads and
writes from worker threads, each opened by storage/db.py), transactions, and the error a failed
write becomes. It knows no table: the store's parts (bots, conversations and messages, and the
books it holds) do.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from byok_tui.core.errors import ByokError, ErrorKind
from byok_tui.storage.db import Progress, connect


class StorageError(ByokError):
    """The database could not be written (disk full, locked by another process, damaged)."""

    kind = ErrorKind.STORAGE

    def __init__(self, path: Path, error: sqlite3.Error) -> None:
        text = str(error).lower()
        code = (getattr(error, "sqlite_errorcode", None) or 0) & 0xFF  # the primary code
        if code == sqlite3.SQLITE_FULL or "full" in text:
            problem = "the disk is full"
            remedy = "Free some disk space, then retry (ctrl+r); nothing typed is lost."
        elif code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM):
            problem = "it cannot be written (a read-only file system, or its permissions)"
            remedy = "Make its folder writable, then retry (ctrl+r); nothing typed is lost."
        elif "locked" in text or "busy" in text:
            problem = "another program holds it locked"
            remedy = "Close the other program or wait a moment, then retry."
        else:
            problem = f"it failed ({error})"
            remedy = "Retry; if it keeps failing, move the database aside."
        super().__init__(f"cannot save to the database {path}: {problem}", remedy=remedy)


class Database:
    """The database file, opened (and migrated) on first use in each thread."""

    def __init__(self, path: Path, progress: Progress | None = None) -> None:
        """`progress`: told how far a long upgrade of the file is (done, total)."""
        self.path = path
        self._local = threading.local()
        self._progress = progress
        self.notices: list[str] = []  # what the user should be told (permissions tightened)

    def connection(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = connect(self.path, self.notices, self._progress)
            self._local.connection = connection
        return connection

    def close(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        connection = self.connection()
        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
            raise StorageError(self.path, error) from None
        try:
            yield connection
            connection.execute("COMMIT")
        except BaseException as error:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            if isinstance(error, sqlite3.Error):
                raise StorageError(self.path, error) from None
            raise

    def _one(self, sql: str, *args: Any) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self.connection().execute(sql, args).fetchone()
        return row

    # The settings table: a name and a value, for what the app keeps between starts.

    def settings(self) -> dict[str, str]:
        rows = self.connection().execute("SELECT name, value FROM settings")
        return {row["name"]: row["value"] for row in rows}

    def set_setting(self, name: str, value: str) -> None:
        with self.transaction() as db:
            db.execute(
                "INSERT INTO settings (name, value) VALUES (?, ?)"
                " ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                (name, value),
            )
