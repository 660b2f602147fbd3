"""Gemini's free tier: requests per day counted locally from the request log and treated like
a budget (a warning at 80 %, then a block that says when it resets); and the waits Gemini
states only in its error bodies (RetryInfo, a spent daily quota) kept with the rate limits."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import pytest

from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.screens.dialogs import ConfirmDialog
from byok_tui.spend.budgets import free_day_start, free_quota
from tests.support.cli import run_cli
from tests.support.pilot import error_texts, make_app, replies, send, settle, wait_for
from tests.support.provider_server import ProviderServer, Reply

KEY = "AIzaSy" + "F" * 33
MODEL = "gemini-3.8-flash"  # 250 free requests a day in the registry


def chats_sent_today(count: int, model: str = MODEL, status: int = 200) -> None:
    now = time.time()
    # A minute ago, unless the free tier's day is younger than that (then at its start).
    started = max(now - 60, free_day_start(now).timestamp())
    rows: list[dict[str, Any]] = [
        {
            "uuid": str(uuid.uuid4()),
            "started": started,
            "provider": "google",
            "purpose": "chat",
            "method": "POST",
            "host": "generativelanguage.googleapis.com",
            "path": f"/v1beta/models/{model}:streamGenerateContent",
            "key_source": "global",
            "model": model,
            "status": status,
            "outcome": "ok",
            "duration_ms": 900,
        }
        for _ in range(count)
    ]
    open_store(open_services()).ledger.add_requests(rows)


def gemini_says(text: str) -> Reply:
    body = {"candidates": [{"content": {"parts": [{"text": text}]}, "finishReason": "STOP"}]}
    return Reply(steps=[f"data: {json.dumps(body)}\r\n\r\n".encode()])


def ask(server: ProviderServer, *extra: str) -> tuple[int, str]:
    env = {"BYOK_TUI_GOOGLE_BASE_URL": f"{server.base_url}/v1beta"}
    done = run_cli("ask", "-p", "google", "-m", MODEL, *extra, "hi", env=env)
    return done.returncode, done.stderr


def test_the_days_free_requests_are_counted_from_the_request_log() -> None:
    chats_sent_today(3)
    chats_sent_today(2, model="gemini-2.5-pro")
    chats_sent_today(4, status=429)  # refused: no quota spent
    quota = free_quota(open_store(open_services()), "google", MODEL)
    assert quota is not None and (quota.used, quota.per_day) == (3, 250)
    assert 0 < quota.resets_at - time.time() <= 25 * 3600  # the next midnight Pacific time
    assert free_quota(open_store(open_services()), "openai", "gpt-5.5") is None  # none known


def test_requests_in_the_free_day_s_first_minute_are_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Half a minute after midnight Pacific time, what was sent since midnight counts (the
    helper above once dated them a minute back, into the day before: the suite failed at
    08:00 UTC)."""
    just_after_midnight = free_day_start(time.time()).timestamp() + 30
    monkeypatch.setattr(time, "time", lambda: just_after_midnight)
    chats_sent_today(3)
    quota = free_quota(open_store(open_services()), "google", MODEL)
    assert quota is not None and quota.used == 3


def test_ask_warns_near_the_free_quota_and_refuses_once_it_is_used(
    server: ProviderServer,
) -> None:
    run_cli("keys", "set", "google", stdin=KEY)
    chats_sent_today(200)
    server.reply_with(gemini_says("fine"))
    status, said = ask(server)
    assert status == 0 and len(server.requests) == 1
    assert f"free tier: 200 of 250 free requests today for {MODEL}" in said

    chats_sent_today(49)  # with the one just sent: 250
    status, said = ask(server)
    assert status == 9 and len(server.requests) == 1, "refused before any request"
    assert f"Free tier used up: 250 of 250 free requests today for {MODEL}" in said
    assert "resets at midnight Pacific time, in " in said

    server.reply_with(gemini_says("anyway"))
    status, _said = ask(server, "--over-budget")
    assert status == 0 and len(server.requests) == 2


async def test_the_app_blocks_at_the_free_quota_and_sends_once_if_asked(
    server: ProviderServer,
) -> None:
    open_key_store(app_paths()).set(entry_name("google"), KEY)
    open_store(open_services()).default_bot("google", MODEL)
    chats_sent_today(250)
    server.reply_with(gemini_says("sent anyway"))
    app = make_app(BYOK_TUI_GOOGLE_BASE_URL=f"{server.base_url}/v1beta")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: bool(app.screen.query("#spend")))
        pane = app.screen.query_one("#spend")
        await wait_for(pilot, lambda: "Free tier: 250 of 250 free requests" in str(pane.render()))
        assert pane.has_class("near")
        await send(pilot, "one more")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        assert server.requests == []
        assert any("Free tier used up: 250 of 250" in e for e in error_texts(app))
        await pilot.click("#yes")
        await wait_for(pilot, lambda: replies(app)[-1:] == ["sent anyway"])


def test_geminis_retry_info_and_spent_daily_quota_are_kept_with_the_rate_limits(
    server: ProviderServer,
) -> None:
    run_cli("keys", "set", "google", stdin=KEY)

    def refusal(quota_id: str, delay: str) -> Reply:
        details = [
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [{"quotaId": quota_id}],
            },
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay},
        ]
        error = {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": details}}
        return Reply(429, {"content-type": "application/json"}, [json.dumps(error).encode()])

    server.reply_with(refusal("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "37s"))
    assert ask(server)[0] == 5
    (row,) = json.loads(run_cli("limits", "--json").stdout)
    assert (row["provider"], row["key"], row["headers"]) == (
        "google",
        "global",
        {"retry-after": "37"},
    )
    assert "retry after 37 s" in run_cli("limits").stdout

    server.reply_with(refusal("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "3600s"))
    ask(server)
    assert "daily limit reached" in run_cli("limits").stdout
