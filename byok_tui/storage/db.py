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

from byok_tui.errors import ByokError, ErrorKind
from byok_tui.paths import ensure_private_dir

log = logging.getLogger(__name__)

# Identifies our files (PRAGMA application_id): "BYOK" in ASCII.
APPLICATION_ID = 0x42594F4B
BUSY_TIMEOUT_MS = 10_000
# Messages indexed for search per step of an upgrade (~0.4 s each on 2 cores).
INDEX_BATCH = 10_000

# How far a long upgrade is: (done, total).
Progress = Callable[[int, int], None]

# Messages written without a parent (stored before branches, or by plain SQL) follow the one
# stored before them, and each conversation shows its last.
LINK_IN_ORDER = """
    UPDATE messages SET parent_id = (
        SELECT max(earlier.id) FROM messages AS earlier
        WHERE earlier.conversation_id = messages.conversation_id AND earlier.id < messages.id
    ) WHERE parent_id IS NULL;
    UPDATE conversations SET leaf_id = (
        SELECT max(id) FROM messages WHERE messages.conversation_id = conversations.id
    ) WHERE leaf_id IS NULL;
"""
MIGRATIONS: tuple[str, ...] = (
    # 1: bots, conversations, messages, settings
    """
    CREATE TABLE bots (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL UNIQUE,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        system_prompt TEXT NOT NULL DEFAULT '',
        temperature REAL,
        max_tokens INTEGER NOT NULL DEFAULT 4096,
        k TEXT,
        created REAL NOT NULL,
        updated REAL NOT NULL
    );
    CREATE TABLE conversations (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        bot_id INTEGER NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
        title TEXT NOT NULL,
        created REAL NOT NULL,
        updated REAL NOT NULL
    );
    CREATE INDEX conversations_by_bot ON conversations(bot_id, updated);
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
        content TEXT NOT NULL DEFAULT '',
        reasoning TEXT NOT NULL DEFAULT '',
        provider TEXT,
        model TEXT,
        key_source TEXT,
        status TEXT NOT NULL CHECK (status IN ('complete', 'partial', 'error')),
        error_kind TEXT,
        error_message TEXT,
        input_tokens INTEGER,
        output_tokens INTEGER,
        created REAL NOT NULL,
        updated REAL NOT NULL
    );
    CREATE INDEX messages_by_conversation ON messages(conversation_id, id);
    CREATE TABLE settings (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    """,
    # 2: a per-bot key belongs to the provider it was set under (one set before belongs to
    # the bot's provider then): it is never sent to another provider the bot moves to.
    """
    ALTER TABLE bots ADD COLUMN k_provider TEXT;
    UPDATE bots SET k_provider = provider WHERE k IS NOT NULL;
    """,
    # 3: what a reply cost, worked out once when it ended, and the price it was worked out
    # with (NULL cost: not known, never $0). Replies by time with what spend and usage reports
    # read: a covering index, 100,000 replies summed in ~50 ms instead of ~85.
    """
    ALTER TABLE messages ADD COLUMN cached_input_tokens INTEGER;
    ALTER TABLE messages ADD COLUMN reasoning_tokens INTEGER;
    ALTER TABLE messages ADD COLUMN cost_usd REAL;
    ALTER TABLE messages ADD COLUMN price TEXT;
    CREATE INDEX replies_spend ON messages(
        created, provider, model, key_source, input_tokens, output_tokens, cost_usd
    ) WHERE role = 'assistant';
    """,
    # 4: spending caps, per provider or for all of them ('all'), per day or per month.
    """
    CREATE TABLE budgets (
        scope TEXT PRIMARY KEY,
        amount_usd REAL NOT NULL CHECK (amount_usd >= 0),
        per TEXT NOT NULL CHECK (per IN ('day', 'month'))
    );
    """,
    # 5: the rate-limit headers of the last response per provider and key source, as sent.
    """
    CREATE TABLE rate_limits (
        provider TEXT NOT NULL,
        key_source TEXT NOT NULL,
        seen REAL NOT NULL,
        headers TEXT NOT NULL,
        PRIMARY KEY (provider, key_source)
    );
    """,
    # 6: every request made (chat, model list, key test, balance, local runtime probe): when,
    # where to, with which key's source and last four characters, and how it ended. Never a
    # key, a body or a query string. `uuid` lets an import merge a log into another.
    """
    CREATE TABLE requests (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        started REAL NOT NULL,
        provider TEXT NOT NULL,
        purpose TEXT NOT NULL,
        method TEXT NOT NULL,
        host TEXT NOT NULL,
        path TEXT NOT NULL,
        key_source TEXT NOT NULL,
        key_last4 TEXT,
        model TEXT,
        status INTEGER,
        outcome TEXT NOT NULL,
        duration_ms INTEGER NOT NULL,
        input_tokens INTEGER,
        output_tokens INTEGER,
        cost_usd REAL
    );
    CREATE INDEX requests_by_time ON requests(started);
    """,
    # 7: what each key's answers said of it (by a fingerprint of the key, never the key),
    # and a bot's key command or the label of the provider key it uses instead of its own.
    """
    CREATE TABLE key_health (
        provider TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        name TEXT NOT NULL,
        state TEXT NOT NULL,
        until REAL,
        checked REAL,
        last_used REAL NOT NULL,
        PRIMARY KEY (provider, fingerprint)
    );
    ALTER TABLE bots ADD COLUMN key_command TEXT;
    ALTER TABLE bots ADD COLUMN key_label TEXT;
    """,
    # 8: fallbacks, one `provider:model` per line; a reply answered by one of them.
    """
    ALTER TABLE bots ADD COLUMN fallbacks TEXT NOT NULL DEFAULT '';
    ALTER TABLE messages ADD COLUMN fallback INTEGER NOT NULL DEFAULT 0;
    """,
    # 9: full-text search over messages and titles, kept up to date by the database itself
    # (a reply's text is indexed again only when it changed). Existing messages are indexed
    # after this script, in batches, with progress (`_index_for_search`).
    """
    CREATE VIRTUAL TABLE messages_fts USING fts5(
        content, content='messages', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
        INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
    END;
    CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, content)
            VALUES ('delete', old.id, old.content);
    END;
    CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages
    WHEN old.content IS NOT new.content BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, content)
            VALUES ('delete', old.id, old.content);
        INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
    END;
    CREATE VIRTUAL TABLE titles_fts USING fts5(
        title, content='conversations', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER titles_fts_insert AFTER INSERT ON conversations BEGIN
        INSERT INTO titles_fts(rowid, title) VALUES (new.id, new.title);
    END;
    CREATE TRIGGER titles_fts_delete AFTER DELETE ON conversations BEGIN
        INSERT INTO titles_fts(titles_fts, rowid, title) VALUES ('delete', old.id, old.title);
    END;
    CREATE TRIGGER titles_fts_update AFTER UPDATE OF title ON conversations
    WHEN old.title IS NOT new.title BEGIN
        INSERT INTO titles_fts(titles_fts, rowid, title) VALUES ('delete', old.id, old.title);
        INSERT INTO titles_fts(rowid, title) VALUES (new.id, new.title);
    END;
    INSERT INTO titles_fts(titles_fts) VALUES ('rebuild');
    """,
    # 10: branches. Each message follows its parent (NULL: the first of its conversation);
    # an edited message or a regenerated reply is a sibling of the one it replaces, which is
    # kept. The conversation shows the branch that ends at its leaf. Messages stored before
    # follow the one stored before them.
    """
    ALTER TABLE messages ADD COLUMN parent_id INTEGER REFERENCES messages(id) ON DELETE CASCADE;
    ALTER TABLE conversations ADD COLUMN leaf_id INTEGER;
    CREATE INDEX messages_by_parent ON messages(conversation_id, parent_id, id);
    """
    + LINK_IN_ORDER,
    # 11: files attached to a message (a text file, an image), kept with it so that the
    # conversation can be sent again and exported.
    """
    CREATE TABLE attachments (
        id INTEGER PRIMARY KEY,
        message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        name TEXT NOT NULL,
        media_type TEXT NOT NULL,
        data BLOB NOT NULL
    );
    CREATE INDEX attachments_by_message ON attachments(message_id, position);
    """,
    # 12: what a conversation's replies cost, read when it opens: the priced replies alone,
    # so a conversation of 1,000,000 messages is summed without reading them (~300 ms before).
    """
    CREATE INDEX conversation_spend ON messages(conversation_id, cost_usd)
        WHERE cost_usd IS NOT NULL;
    """,
    # 13: a conversation's revision, counting changes to what its messages say, but for
    # messages that nothing follows yet (a reply being written, or continued): a send keeps
    # what it read of a long branch and reads only what follows, while the revision it read
    # with is unchanged, whichever process wrote.
    """
    ALTER TABLE conversations ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
    CREATE TRIGGER messages_revised AFTER UPDATE OF content, status, parent_id ON messages
    WHEN EXISTS (SELECT 1 FROM messages later
                 WHERE later.conversation_id = NEW.conversation_id AND later.parent_id = NEW.id)
    BEGIN
        UPDATE conversations SET revision = revision + 1 WHERE id = NEW.conversation_id;
    END;
    """,
)

SEARCH_INDEX_MIGRATION = 9
BRANCHES_MIGRATION = 10
SCHEMA_VERSION = len(MIGRATIONS)


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
        elif info.st_uid != os.geteuid():
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
        if application_id != APPLICATION_ID and (tables or version):
            raise DatabaseError(path, "it is another program's database, not byok-tui's")
        if version > SCHEMA_VERSION:
            raise DatabaseError(
                path, f"it was written by a newer byok-tui (schema {version}); upgrade byok-tui"
            )
        for number in range(version, SCHEMA_VERSION):
            for statement in _statements(MIGRATIONS[number]):
                connection.execute(statement)
            if number + 1 == SEARCH_INDEX_MIGRATION:
                _index_for_search(connection, progress)
        if version < SCHEMA_VERSION:
            connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
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
