"""What is sent again by itself after a failure, and when: a rate limit's stated wait is waited
out once; the bot's next fallback is asked after a countdown, after a short limit was waited out
first; the user's Escape, a new message or a retry by hand stops anything counting down, so
nothing is sent behind their back. (The Pilot tests in tests/providers/test_fallbacks.py drive
the same rules through the app.)"""

from __future__ import annotations

from byok_tui.chat.send_schedule import (
    AUTO_RETRY_LIMIT,
    FALLBACK_SECONDS,
    Countdown,
    SendAgain,
    SendSchedule,
)
from byok_tui.core.errors import ErrorKind
from byok_tui.core.registry import get_provider
from byok_tui.providers.errors import ProviderError

FALLBACK = "openrouter:meta-llama/llama-3.3-70b-instruct"


def limited(wait: float | None, *, daily: bool = False) -> ProviderError:
    return ProviderError(
        ErrorKind.RATE_LIMIT,
        "Rate limited",
        provider=get_provider("openai"),
        status=429,
        retry_after=wait,
        daily_limit=daily,
    )


def server_error() -> ProviderError:
    return ProviderError(ErrorKind.OVERLOADED, "Server error", provider=get_provider("openai"))


def test_a_rate_limit_is_waited_out_once_with_a_countdown_then_sent_again() -> None:
    schedule = SendSchedule()
    schedule.sending(0.0, None)
    schedule.failed(limited(30), 1.0, None, "")
    assert schedule.countdown(1.0) == Countdown("retry", 30)
    assert schedule.due(30.9) is None
    assert schedule.due(31.0) == SendAgain(None), "to the same provider"
    assert schedule.due(31.0) is None, "once"
    schedule.sending(31.0, None)
    schedule.failed(limited(30), 32.0, None, "")
    assert schedule.countdown(32.0) is None and schedule.due(100.0) is None, "not twice"


def test_a_wait_too_long_or_a_daily_quota_is_left_to_the_user() -> None:
    for error in (limited(AUTO_RETRY_LIMIT + 1), limited(5, daily=True), limited(None)):
        schedule = SendSchedule()
        schedule.failed(error, 0.0, None, "")
        assert schedule.countdown(0.0) is None and schedule.due(10_000.0) is None


def test_a_fallback_is_asked_after_its_countdown() -> None:
    schedule = SendSchedule()
    schedule.failed(server_error(), 10.0, FALLBACK, "openai: server error (500)")
    assert schedule.countdown(10.0) == Countdown(
        "fallback", FALLBACK_SECONDS, "openai: server error (500)", FALLBACK
    )
    assert schedule.due(10.0 + FALLBACK_SECONDS) == SendAgain(FALLBACK)
    assert schedule.due(10.0 + FALLBACK_SECONDS) is None


def test_a_short_limit_is_waited_out_before_a_fallback_is_asked() -> None:
    schedule = SendSchedule()
    schedule.failed(limited(3), 0.0, FALLBACK, "openai: rate limited")
    assert schedule.countdown(0.0) == Countdown("retry", 3)
    assert schedule.due(3.0) == SendAgain(None)
    schedule.failed(limited(3), 4.0, FALLBACK, "openai: rate limited")
    assert schedule.countdown(4.0) == Countdown(
        "fallback", FALLBACK_SECONDS, "openai: rate limited", FALLBACK
    ), "the same limit again: the fallback is asked"
    assert schedule.due(4.0 + FALLBACK_SECONDS) == SendAgain(FALLBACK)
    assert not schedule.retried_after_limit, "the fallback may wait out a short limit once"


def test_escape_a_new_message_or_a_retry_by_hand_stops_what_counts_down() -> None:
    for stop in ("stop", "typed"):
        schedule = SendSchedule()
        schedule.failed(limited(30), 0.0, None, "")
        getattr(schedule, stop)()
        assert schedule.countdown(0.0) is None and schedule.due(100.0) is None
        schedule.failed(server_error(), 0.0, FALLBACK, "x")
        getattr(schedule, stop)()
        assert schedule.countdown(0.0) is None and schedule.due(100.0) is None
    schedule = SendSchedule()
    schedule.failed(limited(30), 0.0, None, "")
    schedule.typed()
    schedule.failed(limited(30), 1.0, None, "")
    assert schedule.countdown(1.0) == Countdown("retry", 30), "a new message waits once again"


def test_the_providers_pacing_counts_down_until_the_request_leaves() -> None:
    schedule = SendSchedule()
    schedule.sending(0.0, None)
    schedule.pacing(0.0, 2.5)
    assert schedule.countdown(0.5) == Countdown("pacing", 2)
    schedule.pacing(2.5, None)
    assert schedule.countdown(2.5) is None
    schedule.pacing(3.0, 4.0)
    schedule.ended()
    assert schedule.countdown(3.0) is None and schedule.started == 0.0
