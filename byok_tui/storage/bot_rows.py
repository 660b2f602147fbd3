"""Bots: their configuration, kept terminal-safe, and the key each may have of its own.

The per-bot key (`k`) is read only by `bot_key`, which registers it with the redaction layer;
`Bot` objects carry whether a key is set, never the key itself, and a key set for one provider
is never given to another.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from dataclasses import replace

from byok_tui.core.errors import ByokError
from byok_tui.core.key_text import check_key
from byok_tui.core.records import Bot, BotConfig
from byok_tui.core.redaction import model_id_problem, remember_secret
from byok_tui.core.sanitize import clean_line, strip_terminal_controls
from byok_tui.storage.database import Database

DEFAULT_BOT_NAME = "Default"


class BotNameTakenError(ByokError):
    def __init__(self, name: str) -> None:
        super().__init__(f"a bot named {name!r} exists already", remedy="Choose another name.")


def _check_name_free(db: sqlite3.Connection, name: str, bot_id: int | None = None) -> None:
    taken = db.execute("SELECT 1 FROM bots WHERE name = ? AND id IS NOT ?", (name, bot_id))
    if taken.fetchone() is not None:
        raise BotNameTakenError(name)


class NotFoundError(ByokError):
    def __init__(
        self, message: str, remedy: str = "`byok-tui bot list` shows the bots there are."
    ) -> None:
        super().__init__(message, remedy=remedy)


def stored_config(config: BotConfig) -> BotConfig:
    """A bot's configuration as it is stored: its text terminal-safe, name and model on one
    line (it may come from a share link, an import or a shell argument). A model id that
    looks like a key is refused: it would be sent and shown in clear."""
    problem = model_id_problem(config.model)
    if problem is not None:
        raise ByokError(problem, remedy="Nothing was saved.")
    return replace(
        config,
        name=clean_line(config.name),
        model=clean_line(config.model),
        system_prompt=strip_terminal_controls(config.system_prompt),
        fallbacks=tuple(clean_line(f) for f in config.fallbacks if clean_line(f)),
    )


def bot_values(config: BotConfig) -> tuple[object, ...]:
    """The bots table's columns name … fallbacks, in order."""
    return (
        config.name,
        config.provider,
        config.model,
        config.system_prompt,
        config.temperature,
        config.max_tokens,
        "\n".join(config.fallbacks),
    )


def insert_bot(db: sqlite3.Connection, bot_uuid: str, config: BotConfig) -> int:
    """Add a bot inside the caller's transaction; never sets `k` (only set_bot_key does)."""
    now = time.time()
    cursor = db.execute(
        "INSERT INTO bots (uuid, name, provider, model, system_prompt, temperature,"
        " max_tokens, fallbacks, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (bot_uuid, *bot_values(stored_config(config)), now, now),
    )
    return int(cursor.lastrowid or 0)


def _bot(row: sqlite3.Row) -> Bot:
    config = BotConfig(
        name=row["name"],
        provider=row["provider"],
        model=row["model"],
        system_prompt=row["system_prompt"],
        temperature=row["temperature"],
        max_tokens=row["max_tokens"],
        fallbacks=tuple(row["fallbacks"].split("\n")) if row["fallbacks"] else (),
    )
    kept_for = row["k_provider"] if row["k"] else None
    own = row["k_provider"] == config.provider  # a choice made for another provider is idle
    return Bot(
        row["id"],
        row["uuid"],
        config,
        kept_for == config.provider,
        kept_for,
        key_command=row["key_command"] if own else None,
        key_label=row["key_label"] if own else None,
    )


class BotRows(Database):
    def bots(self) -> list[Bot]:
        rows = self.connection().execute("SELECT * FROM bots ORDER BY name COLLATE NOCASE")
        return [_bot(row) for row in rows]

    def bot(self, name_or_id: str | int) -> Bot:
        column = "id" if isinstance(name_or_id, int) else "name"
        row = self._one(f"SELECT * FROM bots WHERE {column} = ?", name_or_id)  # noqa: S608
        if row is None:
            names = ", ".join(b.name for b in self.bots()) or "none"
            raise NotFoundError(f"no bot named {name_or_id!r} (bots: {names})")
        return _bot(row)

    def default_bot(self, provider: str, model: str) -> Bot:
        """The bot used when none is chosen; created on first start."""
        now = time.time()
        with self.transaction() as db:  # check and create at once: two first starts race
            db.execute(
                "INSERT INTO bots (uuid, name, provider, model, created, updated)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO NOTHING",
                (str(uuid.uuid4()), DEFAULT_BOT_NAME, provider, model, now, now),
            )
        return self.bot(DEFAULT_BOT_NAME)

    def create_bot(self, config: BotConfig, *, bot_uuid: str | None = None) -> Bot:
        config = stored_config(config)
        with self.transaction() as db:
            _check_name_free(db, config.name)
            bot_id = insert_bot(db, bot_uuid or str(uuid.uuid4()), config)
        return self.bot(bot_id)

    def update_bot(self, bot_id: int, config: BotConfig) -> Bot:
        config = stored_config(config)
        with self.transaction() as db:
            _check_name_free(db, config.name, bot_id)
            # The user chose the bot's model: its conversations go to it again, a compare's
            # model kept in one of them included.
            db.execute(
                "UPDATE conversations SET continues_on = NULL WHERE bot_id = ?1 AND EXISTS"
                " (SELECT 1 FROM bots WHERE id = ?1 AND (provider != ?2 OR model != ?3))",
                (bot_id, config.provider, config.model),
            )
            db.execute(
                "UPDATE bots SET name = ?, provider = ?, model = ?, system_prompt = ?,"
                " temperature = ?, max_tokens = ?, fallbacks = ?, updated = ? WHERE id = ?",
                (*bot_values(config), time.time(), bot_id),
            )
        return self.bot(bot_id)

    def bot_tools(self, bot_id: int) -> tuple[str, ...]:
        """The MCP servers (`server`) and single tools (`server:tool`) the bot may use."""
        row = self._one("SELECT tools FROM bots WHERE id = ?", bot_id)
        if row is None:
            raise NotFoundError(f"no bot with id {bot_id}")
        return tuple(line for line in row["tools"].split("\n") if line)

    def set_bot_tools(self, bot_id: int, tools: tuple[str, ...]) -> None:
        """None left: the tools allowed always are forgotten too."""
        with self.transaction() as db:
            db.execute(
                "UPDATE bots SET tools = ?, updated = ? WHERE id = ?",
                ("\n".join(clean_line(t) for t in tools if clean_line(t)), time.time(), bot_id),
            )
            if not tools:
                db.execute("UPDATE bots SET tools_approved = '' WHERE id = ?", (bot_id,))

    def approved_tools(self, bot_id: int) -> tuple[str, ...]:
        """The tools (`server:tool`) whose calls the user allowed always for the bot."""
        row = self._one("SELECT tools_approved FROM bots WHERE id = ?", bot_id)
        if row is None:
            raise NotFoundError(f"no bot with id {bot_id}")
        return tuple(line for line in row["tools_approved"].split("\n") if line)

    def approve_tool(self, bot_id: int, tool: str) -> None:
        """Allow `server:tool` always for the bot (kept until its tools are cleared)."""
        with self.transaction() as db:
            row = db.execute("SELECT tools_approved FROM bots WHERE id = ?", (bot_id,)).fetchone()
            if row is None:
                raise NotFoundError(f"no bot with id {bot_id}")
            approved = [line for line in row["tools_approved"].split("\n") if line]
            if clean_line(tool) and clean_line(tool) not in approved:
                approved.append(clean_line(tool))
            db.execute(
                "UPDATE bots SET tools_approved = ?, updated = ? WHERE id = ?",
                ("\n".join(approved), time.time(), bot_id),
            )

    def delete_bot(self, bot_id: int) -> None:
        with self.transaction() as db:
            db.execute("DELETE FROM bots WHERE id = ?", (bot_id,))

    def bot_key(self, bot_id: int) -> str | None:
        """The per-bot key (`k`), read at call time so a change applies to the next message;
        None while the bot uses another provider than the one it was set under."""
        row = self._one("SELECT k, k_provider, provider FROM bots WHERE id = ?", bot_id)
        if row is None or not row["k"]:
            return None
        remember_secret(row["k"])  # known, so that a copy of it is found anywhere
        if row["k_provider"] != row["provider"]:
            return None  # set for another provider: never sent to this one
        return str(row["k"])

    def bots_keeping_keys_for(self, provider_id: str) -> list[str]:
        """The names of the bots that keep a key, key command or label of their own for
        `provider_id` (set while they used it, whichever provider they use now)."""
        rows = self.connection().execute(
            "SELECT name FROM bots WHERE k_provider = ? AND"
            " (k IS NOT NULL OR key_command IS NOT NULL OR key_label IS NOT NULL)"
            " ORDER BY name COLLATE NOCASE",
            (provider_id,),
        )
        return [str(row["name"]) for row in rows]

    def forget_bot_keys_for(self, provider_id: str) -> list[str]:
        """Clear every bot's own key, key command and label kept for `provider_id`: a
        provider defined anew under that id inherits none of them. The bots' names."""
        names = self.bots_keeping_keys_for(provider_id)
        with self.transaction() as db:
            db.execute(
                "UPDATE bots SET k = NULL, key_command = NULL, key_label = NULL,"
                " k_provider = NULL, updated = ? WHERE k_provider = ?",
                (time.time(), provider_id),
            )
        return names

    def set_bot_key(self, bot_id: int, raw_key: str | None) -> bool:
        """Set the per-bot key (trimmed and checked like a global key: KeyCharacterError, and
        nothing saved, if it holds a character no key has); empty or None clears it. A key
        set replaces the bot's key command or label: a bot has one key of its own."""
        key = check_key(raw_key or "") or None
        remember_secret(key)
        if key is None:
            with self.transaction() as db:
                db.execute(
                    "UPDATE bots SET k = NULL, updated = ? WHERE id = ?", (time.time(), bot_id)
                )
            return False
        self._set_bot_key_choice(bot_id, key=key)
        return True

    def set_bot_key_command(self, bot_id: int, command: str | None) -> None:
        """The command that prints the bot's own key (None: none); replaces a per-bot key or
        label. The command is stored, never the key it prints."""
        self._set_bot_key_choice(bot_id, command=command)

    def set_bot_key_label(self, bot_id: int, label: str | None) -> None:
        """The labelled key of its provider the bot uses (None: none); replaces a per-bot key
        or command."""
        self._set_bot_key_choice(bot_id, label=label)

    def _set_bot_key_choice(
        self,
        bot_id: int,
        *,
        key: str | None = None,
        command: str | None = None,
        label: str | None = None,
    ) -> None:
        chosen = key or command or label
        with self.transaction() as db:
            db.execute(
                "UPDATE bots SET k = ?, key_command = ?, key_label = ?,"
                " k_provider = CASE WHEN ? IS NULL THEN NULL ELSE provider END, updated = ?"
                " WHERE id = ?",
                (key, command, label, chosen, time.time(), bot_id),
            )
