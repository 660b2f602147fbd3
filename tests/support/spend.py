"""Spend of known amounts on known days, written straight into the ledger."""

from __future__ import annotations

import datetime
import time
from dataclasses import replace
from typing import Any

from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.records import Cost
from byok_tui.providers.types import RequestRecord, Usage
from byok_tui.storage.store import Store


def noon_days_ago(days: int) -> float:
    """Local noon `days` days ago: in that local day whatever the time zone."""
    day = datetime.date.today() - datetime.timedelta(days=days)
    return time.mktime(datetime.datetime.combine(day, datetime.time(12)).timetuple())


def a_reply(
    store: Store, provider: str, model: str, usd: float | None, days_ago: int, tokens: int = 100
) -> None:
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, "spend")
    reply = store.add_message(
        conversation.id, "assistant", "", status="partial", provider=provider, model=model
    )
    cost = Cost(usd, "test price") if usd is not None else None
    store.save_reply(
        reply.id,
        content="ok",
        reasoning="",
        status="complete",
        usage=Usage(tokens, tokens // 2),
        cost=cost,
    )
    with store.transaction() as db:
        db.execute(
            "UPDATE messages SET created = ? WHERE id = ?", (noon_days_ago(days_ago), reply.id)
        )


def some_spend() -> None:
    store = open_store(open_services())
    a_reply(store, "openai", "gpt-5.5", 0.25, days_ago=0)
    a_reply(store, "openai", "gpt-5.5", 0.5, days_ago=2)
    a_reply(store, "openai", "gpt-5.5", None, days_ago=2)  # price unknown: counts for nothing
    a_reply(store, "anthropic", "claude-haiku-5-5", 0.125, days_ago=29)
    a_reply(store, "groq", "llama-3.3-70b-versatile", 0.0, days_ago=40)  # out of the 30 days


def a_chat_request(**changes: Any) -> RequestRecord:
    """A chat request to OpenAI as the client records one, with `changes`."""
    record = RequestRecord(
        started=noon_days_ago(1),
        provider="openai",
        purpose="chat",
        method="POST",
        host="api.openai.com",
        path="/v1/chat/completions",
        key_source="global",
        key_last4="x9Qa",
        model="gpt-5.5",
        status=200,
        duration_s=1.5,
        usage=Usage(1204, 388),
    )
    return replace(record, **changes)
