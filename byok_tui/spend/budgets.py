"""Spending caps that stop a send before any request leaves.

A budget caps what replies cost per day or per month (local time), for one provider or for all
of them together. Spend is counted from the replies' stored costs, the app's and `ask`'s alike;
a reply whose price is not known counts for nothing (it is shown as "price unknown"). No
Textual here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo

from byok_tui.core.errors import ByokError, ErrorKind
from byok_tui.core.money import format_usd
from byok_tui.core.records import ALL_PROVIDERS, Budget, BudgetPeriod
from byok_tui.storage.store import Store

WARN_AT = 0.8  # of a budget: from here on the user is told how close they are


def period_start(per: BudgetPeriod, now: float | None = None) -> float:
    """When the current day or month began, in local time, as a Unix time."""
    moment = datetime.fromtimestamp(time.time() if now is None else now)
    start = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if per == "month":
        start = start.replace(day=1)
    return start.timestamp()


@dataclass(frozen=True, slots=True)
class Standing:
    """A budget and what was spent against it in its current period."""

    budget: Budget
    spent: float

    @property
    def reached(self) -> bool:
        return self.spent >= self.budget.amount_usd

    @property
    def near(self) -> bool:
        """At WARN_AT of it or more, not reached yet."""
        return not self.reached and self.spent >= WARN_AT * self.budget.amount_usd

    def describe(self) -> str:
        """`$4.10 of $5.00 this month for openai` (or `for all providers`)."""
        budget = self.budget
        scope = "all providers" if budget.scope == ALL_PROVIDERS else budget.scope
        period = "today" if budget.per == "day" else "this month"
        return (
            f"{format_usd(self.spent) if self.spent else '$0.00'} of "
            f"{format_usd(budget.amount_usd)} {period} for {scope}"
        )


def standing_line(standing: Standing) -> str:
    """A budget as a provider's spend lines say it, marked on its own: `⚠ Budget: …` from
    80 %, `⛔ Budget reached: …` once reached (one budget's state never marks another)."""
    if standing.reached:
        return f"⛔ Budget reached: {standing.describe()}"
    return f"{'⚠ ' if standing.near else ''}Budget: {standing.describe()}"


class BudgetReachedError(ByokError):
    kind = ErrorKind.BUDGET

    def __init__(self, standing: Standing) -> None:
        self.standing = standing
        super().__init__(f"Budget reached: {standing.describe()}; nothing was sent")


def standing_of(store: Store, budget: Budget, now: float | None = None) -> Standing:
    """`budget` with what was spent against it in its current period."""
    scope = None if budget.scope == ALL_PROVIDERS else budget.scope
    return Standing(budget, store.ledger.spent_since(period_start(budget.per, now), scope))


def standings(store: Store, provider_id: str, now: float | None = None) -> list[Standing]:
    """Every budget that applies to a send to `provider_id`, with its period's spend."""
    return [
        standing_of(store, budget, now)
        for budget in store.ledger.budgets()
        if budget.scope in (provider_id, ALL_PROVIDERS)
    ]


def check_budgets(store: Store, provider_id: str, model_id: str | None = None) -> list[Standing]:
    """Raise BudgetReachedError when a budget for `provider_id` is used up, or
    FreeQuotaReachedError when the model's free requests for the day are; else the budgets
    that are near it (to warn about)."""
    applying = standings(store, provider_id)
    for standing in applying:
        if standing.reached:
            raise BudgetReachedError(standing)
    if model_id is not None:
        quota = free_quota(store, provider_id, model_id)
        if quota is not None and quota.reached:
            raise FreeQuotaReachedError(quota)
    return [standing for standing in applying if standing.near]


# The free tier's day: Google's ends at midnight Pacific time.
FREE_DAY_ZONE = "America/Los_Angeles"
_PACIFIC_STANDARD = timezone(timedelta(hours=-8))  # when the system has no time-zone data


def _free_day_zone() -> tzinfo:
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(FREE_DAY_ZONE)
    except (ImportError, LookupError, OSError, ValueError):
        return _PACIFIC_STANDARD


@dataclass(frozen=True, slots=True)
class FreeQuota:
    """A model's free requests per day, and how many were sent since its day began."""

    provider_id: str
    model_id: str
    per_day: int
    used: int
    resets_at: float  # Unix time

    @property
    def reached(self) -> bool:
        return self.used >= self.per_day

    @property
    def near(self) -> bool:
        return not self.reached and self.used >= WARN_AT * self.per_day

    def describe(self, now: float | None = None) -> str:
        """`200 of 250 free requests today for gemini-3.8-flash (resets at midnight Pacific
        time, in 5 h 12 min)`."""
        left = max(0, round(self.resets_at - (time.time() if now is None else now)))
        hours, minutes = divmod(left // 60, 60)
        when = f"{hours} h {minutes} min" if hours else f"{minutes} min"
        return (
            f"{self.used:,} of {self.per_day:,} free requests today for {self.model_id} "
            f"(resets at midnight Pacific time, in {when})"
        )


def free_quota(
    store: Store, provider_id: str, model_id: str, now: float | None = None
) -> FreeQuota | None:
    """The model's free requests per day as the registry knows them (None: it knows none),
    counted from the request log since midnight Pacific time."""
    from byok_tui.core.registry import get_provider

    per_day = get_provider(provider_id).model(model_id).free_requests_per_day
    if per_day is None:
        return None
    day_start = free_day_start(time.time() if now is None else now)
    resets_at = (day_start + timedelta(days=1)).timestamp()  # wall-clock midnight, DST and all
    used = store.ledger.chat_requests_since(provider_id, model_id, day_start.timestamp())
    return FreeQuota(provider_id, model_id, per_day, used, resets_at)


def free_day_start(now: float) -> datetime:
    """When the free tier's day that `now` falls in began: the last midnight Pacific time."""
    moment = datetime.fromtimestamp(now, _free_day_zone())
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


class FreeQuotaReachedError(ByokError):
    kind = ErrorKind.BUDGET

    def __init__(self, quota: FreeQuota) -> None:
        self.quota = quota
        super().__init__(
            f"Free tier used up: {quota.describe()}; nothing was sent",
            remedy="Wait until it resets, pick another model, or send anyway (with billing on, "
            "your key is not held to the free tier's count).",
        )
