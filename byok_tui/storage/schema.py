"""The database's schema: one migration per version, applied in order by storage/db.py.

Migration N turns a database of version N - 1 into version N. A database written by any
earlier release must still open, so a change comes as a new migration at the end.
"""

from __future__ import annotations

# Identifies our files (PRAGMA application_id): "BYOK" in ASCII.
APPLICATION_ID = 0x42594F4B


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
    # 14: the usage report leaves out a send refused before any request (an error reply with
    # no key source): the replies' covering index holds the status too, so 100,000 replies
    # are still summed from the index alone (~50 ms; ~88 ms reading each row's status).
    """
    DROP INDEX replies_spend;
    CREATE INDEX replies_spend ON messages(
        created, provider, model, key_source, status, input_tokens, output_tokens, cost_usd
    ) WHERE role = 'assistant';
    """,
    # 15: the MCP servers (or single tools, `server:tool`) a bot may use, one a line; none by
    # default. Beside the bot's configuration, not in it: a share link or an import never
    # carries it (a server of the same name elsewhere may do anything), and saving the
    # config pane never touches it.
    """
    ALTER TABLE bots ADD COLUMN tools TEXT NOT NULL DEFAULT '';
    """,
    # 16: the tools a reply called, round by round, and what went back to the model (JSON).
    """
    ALTER TABLE messages ADD COLUMN tool_turns TEXT;
    """,
    # 17: the tools (`server:tool`, one a line) the user chose to allow always for the bot,
    # in the app's approval dialog: their calls run without asking again. Beside `tools`,
    # for the same reasons.
    """
    ALTER TABLE bots ADD COLUMN tools_approved TEXT NOT NULL DEFAULT '';
    """,
    # 18: the provider and model a conversation's next messages go to (`provider:model`: a
    # compare's reply kept), until the bot's own provider or model changes; NULL: the bot's.
    """
    ALTER TABLE conversations ADD COLUMN continues_on TEXT;
    """,
)

SEARCH_INDEX_MIGRATION = 9
BRANCHES_MIGRATION = 10
SCHEMA_VERSION = len(MIGRATIONS)
