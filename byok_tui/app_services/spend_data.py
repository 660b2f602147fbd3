"""What keys cost and may still spend, as the screens read and set it: spend and free quotas,
budgets, the rate limits providers stated, usage over time and the request log."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from byok_tui.app_services.chat_state import limit_notes, read_spend
from byok_tui.app_services.data_part import DataPart

if TYPE_CHECKING:
    from byok_tui.core.records import Budget, Spend
    from byok_tui.spend.usage_report import UsageOverview


class SpendData(DataPart):
    def limit_notes(self) -> dict[str, str]:
        """Per provider, what its latest stated rate limits say when it matters."""
        self._settled()
        return limit_notes(self._context)

    def spend(self, provider_id: str, model_id: str | None = None) -> Spend:
        """What `provider_id` cost today and this month, its budgets, and what is left of
        `model_id`'s free requests today (where the registry knows them)."""
        self._settled()
        return read_spend(self._context, provider_id, model_id)

    def set_budget(self, budget: Budget) -> None:
        db = self._context.db
        self._run("set-budget", lambda: db.ledger.set_budget(budget))

    def remove_budget(self, scope: str) -> bool:
        """False when there was no budget for `scope`."""
        db = self._context.db
        return self._run("remove-budget", lambda: db.ledger.remove_budget(scope))

    def budget_lines(self) -> list[str]:
        """Every budget in words with its period's spend, marked when near or reached."""
        from byok_tui.spend.budgets import standing_of

        self._settled()
        db = self._context.db
        lines = []
        for budget in db.ledger.budgets():
            standing = standing_of(db, budget)
            mark = "⛔ reached: " if standing.reached else "⚠ " if standing.near else ""
            lines.append(f"{mark}{standing.describe()}")
        return lines

    def stated_limits(self) -> dict[str, list[str]]:
        """Per provider, what each key source's latest response said of its rate limits, with
        its age: `global: 41/60 requests (reset 19s) (as of 12 s ago)`."""
        import time

        from byok_tui.providers.limits import RateLimits, age_in_words

        self._settled()
        found: dict[str, list[str]] = {}
        for provider, source, seen, headers in self._context.db.ledger.rate_limits():
            said = RateLimits.stored(headers).describe(time.time() - seen)
            age = age_in_words(time.time() - seen)
            found.setdefault(provider, []).append(f"{source}: {said} (as of {age})")
        return found

    def usage_overview(self) -> UsageOverview:
        """Spend per day over the last 30 days per provider, and the totals per model."""
        from byok_tui.spend.usage_report import read_usage_overview

        self._settled()
        return read_usage_overview(self._context.db)

    def request_log(self, limit: int) -> list[dict[str, Any]]:
        """The `limit` latest requests, newest first."""
        self._settled()
        return self._context.db.ledger.requests(limit=limit)
