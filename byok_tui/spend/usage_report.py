"""What the Usage screen shows, read in one go: spend per day over the last days per provider,
and the totals per model. Plain data, no Textual; read in a worker thread."""

from __future__ import annotations

import datetime
import time
from dataclasses import dataclass
from typing import Any

from byok_tui.storage.store import Store

USAGE_DAYS = 30


@dataclass(frozen=True, slots=True)
class ProviderDays:
    provider_id: str
    daily_usd: tuple[float, ...]  # oldest first, today last; unpriced replies count for nothing
    requests: int
    unpriced: int  # replies whose price is not known

    @property
    def total_usd(self) -> float:
        return sum(self.daily_usd)


@dataclass(frozen=True, slots=True)
class UsageOverview:
    days: int
    providers: tuple[ProviderDays, ...]  # those with a reply in the period, by spend
    by_model: tuple[dict[str, Any], ...]  # rows of Ledger.usage(..., "model")


def read_usage_overview(
    store: Store, days: int = USAGE_DAYS, now: float | None = None
) -> UsageOverview:
    """The last `days` local days, today included."""
    today = datetime.date.fromtimestamp(time.time() if now is None else now)
    first = today - datetime.timedelta(days=days - 1)
    since = time.mktime(first.timetuple())  # local midnight
    index = {(first + datetime.timedelta(days=i)).isoformat(): i for i in range(days)}
    spend: dict[str, list[float]] = {}
    counts: dict[str, list[int]] = {}
    for row in store.ledger.usage(since, "day"):
        position = index.get(row["day"])
        if position is None:
            continue
        provider = str(row["provider"] or "unknown")
        daily = spend.setdefault(provider, [0.0] * days)
        daily[position] += row["cost_usd"] or 0.0
        seen = counts.setdefault(provider, [0, 0])
        seen[0] += row["requests"]
        seen[1] += row["unpriced"]
    providers = sorted(
        (
            ProviderDays(provider, tuple(daily), counts[provider][0], counts[provider][1])
            for provider, daily in spend.items()
        ),
        key=lambda p: (-p.total_usd, -p.requests, p.provider_id),
    )
    return UsageOverview(days, tuple(providers), tuple(store.ledger.usage(since, "model")))
