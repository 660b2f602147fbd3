"""The ledger: what replies and requests cost, budgets, the providers' stated rate limits and
the log of every request made. Never a key: a request is kept with its key's source and last
four characters, never a body or a query string.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
import uuid
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from byok_tui.core.records import Budget
from byok_tui.core.redaction import redact
from byok_tui.core.sanitize import clean_line

if TYPE_CHECKING:
    from byok_tui.providers.types import RequestRecord
    from byok_tui.storage.database import Database

UsageGrouping = Literal["provider", "model", "bot", "key", "day"]
# What each grouping of `Ledger.usage` names its rows by: (column, SQL expression).
_USAGE_GROUPS: dict[str, tuple[tuple[str, str], ...]] = {
    "provider": (("provider", "m.provider"),),
    "model": (("provider", "m.provider"), ("model", "m.model")),
    "bot": (("bot", "b.name"), ("provider", "m.provider"), ("model", "m.model")),
    "key": (("provider", "m.provider"), ("key", "m.key_source")),
    "day": (("day", "date(m.created, 'unixepoch', 'localtime')"), ("provider", "m.provider")),
}

# What the request log keeps of one request, in the order `Ledger.requests` returns it.
REQUEST_COLUMNS = (
    "uuid",
    "started",
    "provider",
    "purpose",
    "method",
    "host",
    "path",
    "key_source",
    "key_last4",
    "model",
    "status",
    "outcome",
    "duration_ms",
    "input_tokens",
    "output_tokens",
    "cost_usd",
)


def insert_requests(db: sqlite3.Connection, rows: list[dict[str, Any]]) -> int:
    """Rows of the request log, inside the caller's transaction; one whose uuid is already
    here is skipped. How many were added."""
    names = ", ".join(REQUEST_COLUMNS)
    marks = ", ".join("?" for _ in REQUEST_COLUMNS)
    added = 0
    for row in rows:
        added += db.execute(
            f"INSERT OR IGNORE INTO requests ({names}) VALUES ({marks})",  # noqa: S608
            tuple(row.get(name) for name in REQUEST_COLUMNS),
        ).rowcount
    return added


class ProviderSpend(NamedTuple):
    """What one provider's replies cost today and this month, and this month per key source
    (only sources with a reply whose cost is known)."""

    today: float
    month: float
    month_by_key: tuple[tuple[str, float], ...]


class Ledger:
    """Reads and writes of the spend tables, through the store's connection per thread."""

    def __init__(self, store: Database) -> None:
        self._store = store

    def spent_since(self, since: float, provider: str | None = None) -> float:
        """What replies since `since` (a Unix time) cost, for one provider or all of them;
        replies whose cost is not known count for nothing."""
        query = (
            "SELECT COALESCE(SUM(cost_usd), 0) FROM messages"
            " WHERE role = 'assistant' AND created >= ?"
        )
        values: tuple[object, ...] = (since,)
        if provider is not None:
            query += " AND provider = ?"
            values += (provider,)
        return float(self._store.connection().execute(query, values).fetchone()[0])

    def provider_spend(self, provider: str, day: float, month: float) -> ProviderSpend:
        """What `provider`'s replies since `day` and since `month` (a day of that month)
        cost, and the month's per key source, in one pass over the month's replies: the chat
        screen reads it as it opens and after every reply (with 10,000 replies this month,
        three queries took ~35 ms of the opening, waiting on the screen's frames; one ~5 ms).
        Replies whose cost is not known count for nothing."""
        rows = (
            self._store.connection()
            .execute(
                "SELECT key_source, SUM(cost_usd), SUM(CASE WHEN created >= ? THEN cost_usd END)"
                " FROM messages WHERE role = 'assistant' AND created >= ? AND provider = ?"
                " GROUP BY key_source ORDER BY key_source",
                (day, month, provider),
            )
            .fetchall()
        )
        return ProviderSpend(
            math.fsum(today for _key, _month, today in rows if today is not None),
            math.fsum(spent for _key, spent, _today in rows if spent is not None),
            tuple(
                (str(key or "unknown"), float(spent))
                for key, spent, _today in rows
                if spent is not None
            ),
        )

    def usage(self, since: float, by: UsageGrouping) -> list[dict[str, Any]]:
        """Replies since `since` grouped `by` provider, model, bot, key source or local day:
        requests, tokens, and the cost of those whose price is known (None when none is)."""
        columns = _USAGE_GROUPS[by]
        names = ", ".join(f"{expression} AS {name}" for name, expression in columns)
        keys = ", ".join(expression for _name, expression in columns)
        rows = self._store.connection().execute(
            f"SELECT {names}, COUNT(*) AS requests,"  # noqa: S608 (names from _USAGE_GROUPS)
            " COALESCE(SUM(m.input_tokens), 0) AS input_tokens,"
            " COALESCE(SUM(m.output_tokens), 0) AS output_tokens,"
            " SUM(m.cost_usd) AS cost_usd, COUNT(*) - COUNT(m.cost_usd) AS unpriced"
            " FROM messages AS m"
            + (
                " JOIN conversations AS c ON c.id = m.conversation_id"
                " JOIN bots AS b ON b.id = c.bot_id"
                if by == "bot"
                else ""
            )
            + " WHERE m.role = 'assistant' AND m.created >= ? AND NOT"
            # A send refused before any request (no key, a budget...) is kept as an error
            # with no key source: nothing was sent, so it is no request.
            " (m.status = 'error' AND m.key_source IS NULL)"
            f" GROUP BY {keys} ORDER BY {keys}",
            (since,),
        )
        return [dict(row) for row in rows]

    def save_rate_limits(
        self, provider: str, key_source: str, headers: tuple[tuple[str, str], ...]
    ) -> None:
        """The rate-limit headers of the latest response (never a key: see providers/limits)."""
        with self._store.transaction() as db:
            db.execute(
                "INSERT INTO rate_limits (provider, key_source, seen, headers) VALUES (?, ?, ?, ?)"
                " ON CONFLICT(provider, key_source) DO UPDATE SET seen = excluded.seen,"
                " headers = excluded.headers",
                (provider, key_source, time.time(), json.dumps(dict(headers))),
            )

    def rate_limits(self) -> list[tuple[str, str, float, dict[str, str]]]:
        """(provider, key source, when seen, headers), by provider."""
        rows = self._store.connection().execute(
            "SELECT provider, key_source, seen, headers FROM rate_limits ORDER BY provider"
        )
        return [
            (row["provider"], row["key_source"], row["seen"], json.loads(row["headers"]))
            for row in rows
        ]

    def budgets(self) -> list[Budget]:
        query = "SELECT scope, amount_usd, per FROM budgets ORDER BY scope"
        rows = self._store.connection().execute(query)
        return [Budget(row["scope"], row["amount_usd"], row["per"]) for row in rows]

    def set_budget(self, budget: Budget) -> None:
        with self._store.transaction() as db:
            db.execute(
                "INSERT INTO budgets (scope, amount_usd, per) VALUES (?, ?, ?) ON CONFLICT(scope)"
                " DO UPDATE SET amount_usd = excluded.amount_usd, per = excluded.per",
                (budget.scope, budget.amount_usd, budget.per),
            )

    def remove_budget(self, scope: str) -> bool:
        with self._store.transaction() as db:
            return db.execute("DELETE FROM budgets WHERE scope = ?", (scope,)).rowcount > 0

    # The request log -------------------------------------------------------------------------

    def record_request(self, record: RequestRecord, cost_usd: float | None) -> None:
        """One request as it ended. Host and path are cleaned and redacted (a base URL is the
        user's to set); the record holds no query string, body or key by construction."""
        usage = record.usage
        row = {
            "uuid": str(uuid.uuid4()),
            "started": record.started,
            "provider": clean_line(record.provider)[:64],
            "purpose": clean_line(record.purpose)[:32],
            "method": clean_line(record.method)[:16],
            "host": clean_line(redact(record.host))[:255],
            "path": clean_line(redact(record.path))[:512],
            "key_source": clean_line(record.key_source)[:64],
            "key_last4": record.key_last4,
            "model": clean_line(redact(record.model))[:200] if record.model else None,
            "status": record.status,
            "outcome": clean_line(record.outcome)[:32],
            "duration_ms": round(record.duration_s * 1000),
            "input_tokens": usage.input_tokens if usage else None,
            "output_tokens": usage.output_tokens if usage else None,
            "cost_usd": cost_usd,
        }
        self.add_requests([row])

    def add_requests(self, rows: list[dict[str, Any]]) -> int:
        """Rows of the request log (recorded, or imported: one already here is skipped)."""
        with self._store.transaction() as db:
            return insert_requests(db, rows)

    def requests(self, since: float = 0.0, limit: int | None = None) -> list[dict[str, Any]]:
        """Requests started since `since`, newest first."""
        names = ", ".join(REQUEST_COLUMNS)
        rows = self._store.connection().execute(
            f"SELECT {names} FROM requests WHERE started >= ?"  # noqa: S608 (fixed names)
            " ORDER BY started DESC, id DESC LIMIT ?",
            (since, -1 if limit is None else limit),
        )
        return [dict(row) for row in rows]

    def chat_requests_since(self, provider: str, model: str, since: float) -> int:
        """How many chat requests `model` of `provider` answered since `since` (one refused
        with an error status spent no quota)."""
        query = (
            "SELECT COUNT(*) FROM requests WHERE started >= ? AND provider = ? AND model = ?"
            " AND purpose = 'chat' AND status BETWEEN 200 AND 299"
        )
        row = self._store.connection().execute(query, (since, provider, model)).fetchone()
        return int(row[0])
