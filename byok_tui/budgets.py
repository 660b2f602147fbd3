"""Spending caps that stop a send before any request leaves.

A budget caps what replies cost per day or per month (local time), for one provider or for all
of them together. Spend is counted from the replies' stored costs, the app's and `ask`'s alike;
a reply whose price is not known counts for nothing (it is shown as "price unknown"). No
Textual here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

from byok_tui.errors import ByokError, ErrorKind
from byok_tui.pricing import format_usd
from byok_tui.records import ALL_PROVIDERS, Budget, BudgetPeriod
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


def check_budgets(store: Store, provider_id: str) -> list[Standing]:
    """Raise BudgetReachedError when a budget for `provider_id` is used up; else the budgets
    that are near it (to warn about)."""
    applying = standings(store, provider_id)
    for standing in applying:
        if standing.reached:
            raise BudgetReachedError(standing)
    return [standing for standing in applying if standing.near]
