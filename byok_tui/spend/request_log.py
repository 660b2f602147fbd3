"""What the provider client reports of each request, kept in the ledger: the request log (with
what a reply cost) and the rate limits the provider stated. The app and the CLI keep them the
same way; only how a write runs differs (the app's writer thread, or at once).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from byok_tui.providers.client import ProviderClient
    from byok_tui.providers.limits import RateLimits
    from byok_tui.providers.types import RequestRecord
    from byok_tui.storage.store import Store

# Runs a write: (a name for it, what it does in words, the write itself).
WriteRunner = Callable[[str, str, Callable[[], object]], None]

_numbers = itertools.count()


def keep_request(store: Store, record: RequestRecord) -> None:
    """One request in the log, with what it cost when it carried a reply's tokens."""
    from byok_tui.spend.pricing import cost_of

    cost = None
    if record.model is not None and record.usage is not None:
        cost = cost_of(record.provider, record.model, record.usage).usd
    store.ledger.record_request(record, cost)
    store.key_health.note(record)


def keep_tool_call(store: Store, record: RequestRecord) -> None:
    """A tool call in the log: its server, tool, time, outcome and result size (never its
    arguments or result); it costs nothing itself (the rounds around it are priced)."""
    store.ledger.record_request(record, None)


def keep_what_the_client_reports(client: ProviderClient, store: Store, run: WriteRunner) -> None:
    """Every request the client makes goes to the log, and every response's rate limits are
    kept per provider and key source."""

    def request_ended(record: RequestRecord) -> None:
        # Each record is a write of its own: none may replace another queued before it.
        run(f"request:{next(_numbers)}", "record the request", lambda: keep_request(store, record))

    def limits_stated(provider_id: str, key_source: str, limits: RateLimits) -> None:
        run(
            f"rate-limits:{provider_id}:{key_source}",
            "record the rate limits",
            lambda: store.ledger.save_rate_limits(provider_id, key_source, limits.headers),
        )

    client.on_request = request_ended
    client.on_limits = limits_stated


def request_cells(row: dict[str, Any]) -> tuple[str, ...]:
    """One row of the request log in words, as the Requests screen and `byok-tui requests`
    show it (see REQUEST_HEADINGS)."""
    from byok_tui.core.money import format_usd
    from byok_tui.spend.pricing import usage_line

    last4 = row.get("key_last4")
    key = f"{row['key_source']} …{last4}" if last4 else str(row["key_source"])
    status = "—" if row.get("status") is None else str(row["status"])
    if row.get("outcome") not in (None, "ok"):
        status += f" {row['outcome']}"
    tokens = usage_line(row.get("input_tokens"), row.get("output_tokens"), None, priced=False)
    cost = row.get("cost_usd")
    return (
        time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(row["started"]))),
        str(row["provider"]),
        str(row["purpose"]),
        f"{row['method']} {row['host']}{row['path']}",
        key,
        status,
        f"{int(row['duration_ms']) / 1000:.2f} s",
        tokens or "—",
        "—" if cost is None else format_usd(float(cost)),
    )


REQUEST_HEADINGS = (
    "time",
    "provider",
    "purpose",
    "request",
    "key",
    "status",
    "took",
    "tokens",
    "cost",
)
