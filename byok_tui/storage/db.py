"""Opening the database: WAL, a busy timeout, versioned migrations, mode 0600.

A file that is not a byok-tui database (corrupt, or another program's SQLite file) is reported
by name and never written to.

Only SQLite ever opens the database file. POSIX locks belong to a process, not to a
descriptor: closing any descriptor of the file, even one opened just to read its header,
drops every lock the process's SQLite connections hold on it. Another process then believes
it is the last user and deletes the write-ahead log that this one is still writing to.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import sqlite3
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from byok_tui.core.errors import ByokError, ErrorKind
from byok_tui.core.paths import ensure_private_dir
from byok_tui.core.system import owned_by_someone_else
from byok_tui.storage import schema

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 10_000
# Messages indexed for search per step of an upgrade (~0.4 s each on 2 cores).
INDEX_BATCH = 10_000

# How far a long upgrade is: (done, total).
Progress = Callable[[int, int], None]


class DatabaseError(ByokError):
    kind = ErrorKind.STORAGE

    def __init__(self, path: Path, problem: str, *, remedy: str | None = None) -> None:
        self.path = path
        super().__init__(
            f"cannot use the database {path}: {problem}",
            remedy=remedy
            or "Move the file aside (byok-tui then starts a new one); it was not changed.",
        )


def _check_companions(path: Path) -> None:
    """The database's -wal and -shm files, if there, must be plain files of the user's own,
    with no other name: in a folder that was left open, another user could have put them
    there to read or change what is written. Looked at with lstat: never opened."""
    for suffix in ("-wal", "-shm"):
        companion = path.with_name(path.name + suffix)
        try:
            info = os.lstat(companion)
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(info.st_mode):
            problem = "a link to another file"
        elif not stat.S_ISREG(info.st_mode):
            problem = "not a file"
        elif owned_by_someone_else(info.st_uid):
            problem = "another user's file"
        elif info.st_nlink != 1:
            problem = "a file with another name elsewhere"
        else:
            continue
        raise DatabaseError(
            path,
            f"{companion.name} beside it is {problem}; byok-tui did not make it",
            remedy=f"Move {companion} aside (someone may have put it there), then start again.",
        )


def _create_private(path: Path) -> None:
    """Create `path` empty with mode 0600 if it does not exist, without opening it: a private
    file is made beside it and linked into place (a link never replaces a file another
    process created meanwhile)."""
    if path.exists():
        return
    fd, temporary = tempfile.mkstemp(prefix=".new-database-", dir=path.parent)  # mode 0600
    os.close(fd)
    try:
        os.link(temporary, path)
    except FileExistsError:
        pass  # another process created it first: use theirs
    except OSError:
        pass  # no hard links here: SQLite creates it, and connect() makes it private
    finally:
        with contextlib.suppress(OSError):
            Path(temporary).unlink()


_UNCHANGED = "the database was not changed."


def database_problem(error: sqlite3.Error) -> tuple[str, str]:
    """(what happened, what to do) for an error opening the database: it is called damaged
    only when SQLite says so, never for a full disk or a read-only file system."""
    code = (getattr(error, "sqlite_errorcode", None) or 0) & 0xFF  # the primary code
    if code == sqlite3.SQLITE_FULL:
        return "the disk is full", f"Free some disk space, then start byok-tui again; {_UNCHANGED}"
    if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM):
        return (
            "it cannot be written (a read-only file system, or its permissions)",
            f"Make its folder writable, or set BYOK_TUI_HOME to a writable folder; {_UNCHANGED}",
        )
    if code == sqlite3.SQLITE_IOERR:
        return (
            f"an input/output error occurred reading or writing it ({error})",
            "Check the disk (full, failing, or a network drive gone), then start again.",
        )
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return "another program holds it locked", "Close the other program or wait, then retry."
    if code == sqlite3.SQLITE_CANTOPEN:
        return (
            "it cannot be opened (check its permissions and its folder's)",
            f"Make its folder readable and writable by you; {_UNCHANGED}",
        )
    if code == sqlite3.SQLITE_NOTADB:
        problem = "it is not an SQLite database (corrupt or another kind of file)"
    elif code == sqlite3.SQLITE_CORRUPT:
        problem = f"it is damaged ({error})"
    else:
        problem = f"it could not be opened ({error})"
    return problem, "Move the file aside (byok-tui then starts a new one); it was not changed."


def _os_problem(error: OSError) -> tuple[str, str]:
    """The same for a failure of the file system before SQLite is involved."""
    if error.errno == errno.ENOSPC:
        return "the disk is full", f"Free some disk space, then start byok-tui again; {_UNCHANGED}"
    if error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return (
            f"its folder cannot be written ({error.strerror})",
            "Make the folder writable, or set BYOK_TUI_HOME to a writable folder.",
        )
    return error.strerror or "it cannot be created", "Check the folder and the disk."


def connect(
    path: Path, notices: list[str] | None = None, progress: Progress | None = None
) -> sqlite3.Connection:
    """Open (creating or migrating as needed) the byok-tui database at `path`. What the user
    should be told (a folder's permissions tightened) is added to `notices`; a long upgrade
    reports how far it is to `progress` (done, total)."""
    try:
        if ensure_private_dir(path.parent):
            said = f"the data folder {path.parent} could be read by others: tightened to 0700"
            log.warning("%s", said)
            if notices is not None:
                notices.append(said)
        _check_companions(path)
        _create_private(path)
    except OSError as error:
        problem, remedy = _os_problem(error)
        raise DatabaseError(path, problem, remedy=remedy) from None
    try:
        connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    except sqlite3.Error as error:
        problem, remedy = database_problem(error)
        raise DatabaseError(path, problem, remedy=remedy) from None
    try:
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        # Reads the header first: a foreign file is never written.
        _migrate(path, connection, progress)
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA foreign_keys = ON")
        connection.execute("PRAGMA synchronous = NORMAL")
        # A deleted message or draft may hold a key: its pages are zeroed, not left free with
        # the text in them (many SQLite builds do not do so by default).
        connection.execute("PRAGMA secure_delete = ON")
    except sqlite3.Error as error:
        connection.close()
        problem, remedy = database_problem(error)
        raise DatabaseError(path, problem, remedy=remedy) from None
    except DatabaseError:
        connection.close()
        raise
    if path.stat().st_mode & 0o077:  # chmod works on the name: no descriptor is opened
        path.chmod(0o600)
    connection.row_factory = sqlite3.Row
    return connection


def _migrate(path: Path, connection: sqlite3.Connection, progress: Progress | None) -> None:
    connection.execute("BEGIN IMMEDIATE")  # one process migrates; others wait, then see it done
    try:
        application_id = connection.execute("PRAGMA application_id").fetchone()[0]
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        tables = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if application_id != schema.APPLICATION_ID and (tables or version):
            raise DatabaseError(path, "it is another program's database, not byok-tui's")
        if version > schema.SCHEMA_VERSION:
            raise DatabaseError(
                path, f"it was written by a newer byok-tui (schema {version}); upgrade byok-tui"
            )
        for number in range(version, schema.SCHEMA_VERSION):
            for statement in _statements(schema.MIGRATIONS[number]):
                connection.execute(statement)
            if number + 1 == schema.SEARCH_INDEX_MIGRATION:
                _index_for_search(connection, progress)
        if version < schema.SCHEMA_VERSION:
            connection.execute(f"PRAGMA application_id = {schema.APPLICATION_ID}")
            connection.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION}")
        connection.execute("COMMIT")
    except BaseException:
        # SQLite may have rolled back already (a full disk does): a second ROLLBACK would
        # fail and hide the error that matters.
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


def _statements(script: str) -> list[str]:
    # executescript() would commit our transaction first; run statement by statement instead
    # (a trigger's body holds semicolons of its own: a statement ends where SQLite says).
    statements: list[str] = []
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n;"):
                statements.append(pending.strip())
            pending = ""
    return statements


def _index_for_search(connection: sqlite3.Connection, progress: Progress | None) -> None:
    """Index the messages stored before search existed, a batch at a time (100,000 messages
    take a few seconds), saying how far it is after each batch."""
    total = connection.execute("SELECT count(*) FROM messages").fetchone()[0]
    done, last_id = 0, 0
    while done < total:
        batch_end = connection.execute(
            "SELECT max(id), count(*) FROM"
            " (SELECT id FROM messages WHERE id > ? ORDER BY id LIMIT ?)",
            (last_id, INDEX_BATCH),
        ).fetchone()
        if not batch_end[1]:
            break
        connection.execute(
            "INSERT INTO messages_fts(rowid, content)"
            " SELECT id, content FROM messages WHERE id > ? AND id <= ?",
            (last_id, batch_end[0]),
        )
        last_id, done = batch_end[0], done + batch_end[1]
        if progress is not None:
            progress(done, total)
