"""The spend the chat screen shows for a provider (today, this month, this month per key) is
what the ledger's reports say, read in one pass over the month's replies."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from byok_tui.spend.budgets import period_start
from byok_tui.storage.store import Store

DAY = period_start("day")
MONTH = period_start("month")

# When a reply was made: last month, earlier this month (when today is not the 1st), today.
WHEN = st.sampled_from([MONTH - 60.0, MONTH + (DAY - MONTH) / 2, DAY + 1.0])
REPLY = st.tuples(
    st.sampled_from(["openai", "groq"]),
    st.sampled_from(["global", "bot", "key:work", None]),  # None: a reply from before sources
    st.one_of(st.none(), st.floats(min_value=0, max_value=50, allow_nan=False)),
    WHEN,
    st.sampled_from(["assistant", "user"]),
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """One database for every example (each starts by emptying its messages)."""
    store = Store(Path(tmp_path_factory.mktemp("spend")) / "byok-tui.sqlite3")
    store.create_conversation(store.default_bot("openai", "gpt-5.5").id, "spend")
    yield store
    store.close()


@settings(max_examples=60, deadline=None)
@given(st.lists(REPLY, max_size=12))
def test_a_providers_spend_in_one_pass_is_what_the_reports_say(
    store: Store, replies: list[tuple[str, str | None, float | None, float, str]]
) -> None:
    ledger = store.ledger
    with store.transaction() as db:
        db.execute("DELETE FROM messages")
        conversation_id = db.execute("SELECT id FROM conversations").fetchone()[0]
        for number, (provider, source, usd, created, role) in enumerate(replies):
            db.execute(
                "INSERT INTO messages (uuid, conversation_id, role, content, status, provider,"
                " key_source, cost_usd, created, updated) VALUES (?, ?, ?, 'x', 'complete', ?,"
                " ?, ?, ?, ?)",
                (f"m{number}", conversation_id, role, provider, source, usd, created, created),
            )

    for provider in ("openai", "groq", "anthropic"):
        spend = ledger.provider_spend(provider, DAY, MONTH)
        assert math.isclose(spend.today, ledger.spent_since(DAY, provider), abs_tol=1e-9)
        assert math.isclose(spend.month, ledger.spent_since(MONTH, provider), abs_tol=1e-9)
        by_key = [
            (str(row["key"] or "unknown"), row["cost_usd"])
            for row in ledger.usage(MONTH, "key")
            if row["provider"] == provider and row["cost_usd"] is not None
        ]
        assert [key for key, _ in spend.month_by_key] == [key for key, _ in by_key]
        for (_, got), (_, expected) in zip(spend.month_by_key, by_key, strict=True):
            assert math.isclose(got, expected, abs_tol=1e-9)
