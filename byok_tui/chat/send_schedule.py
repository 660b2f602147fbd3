"""When a failed message is sent again by itself, and what the activity line counts down
meanwhile: a rate limit's wait (up to AUTO_RETRY_LIMIT seconds) waited out once, the bot's
next fallback asked after FALLBACK_SECONDS, the provider's own pacing before a request. The
user stops a countdown (Escape), or sends, retries or continues by hand, and nothing is sent
behind their back after that. Times come from the caller's clock; no Textual, no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from byok_tui.core.errors import ByokError, ErrorKind
from byok_tui.providers.errors import ProviderError
from byok_tui.providers.fallbacks import short_wait

AUTO_RETRY_LIMIT = 90.0  # seconds: a longer wait is left to the user (ctrl+r)
FALLBACK_SECONDS = 5  # the countdown before the bot's next fallback is asked (Esc stays)


@dataclass(frozen=True, slots=True)
class Countdown:
    """What the activity line counts down, in whole seconds."""

    kind: Literal["fallback", "retry", "pacing"]
    seconds: int
    what: str = ""  # a fallback's: what went wrong, in a few words
    to: str = ""  # a fallback's: the `provider:model` asked next


@dataclass(frozen=True, slots=True)
class SendAgain:
    """The wait is over: send the conversation's last message again, to `fallback` (None: the
    bot's own provider)."""

    fallback: str | None


@dataclass
class SendSchedule:
    retry_at: float = 0.0  # when a rate-limited message is sent again by itself
    retried_after_limit: bool = False  # once only, for a message (and once for a fallback)
    target: str | None = None  # the fallback the send in progress asks (None: the bot's own)
    fallback_at: float = 0.0  # when the next fallback is asked, by itself
    fallback_to: str = ""
    fallback_what: str = ""
    pacing_until: float = 0.0  # the provider's pacing holds the request until then
    started: float = 0.0  # when the send in progress started (0: none is)

    def stop(self) -> None:
        """Nothing is sent again by itself (Escape; a send, a retry by hand)."""
        self.retry_at = self.fallback_at = 0.0

    def typed(self) -> None:
        """A new message: it may wait out a rate limit once, as if none had been."""
        self.stop()
        self.retried_after_limit = False

    def sending(self, now: float, fallback: str | None) -> None:
        self.started, self.target = now, fallback

    def pacing(self, now: float, seconds: float | None) -> None:
        """The request waits `seconds` for the provider's pacing (None: it waits no more)."""
        self.pacing_until = now + seconds if seconds else 0.0

    def ended(self) -> None:
        self.pacing_until = self.started = 0.0

    def failed(
        self, error: ByokError, now: float, fallback_to: str | None, fallback_what: str
    ) -> None:
        """A send failed: count down to the bot's next fallback (`fallback_to`), unless a
        short rate limit is to be waited out first; or wait out a rate limit's stated wait,
        once, when it is not a daily quota and not longer than AUTO_RETRY_LIMIT."""
        if fallback_to is not None and (short_wait(error) is None or self.retried_after_limit):
            self.fallback_at = now + FALLBACK_SECONDS
            self.fallback_to, self.fallback_what = fallback_to, fallback_what
            return
        if (
            isinstance(error, ProviderError)
            and error.kind is ErrorKind.RATE_LIMIT
            and not error.daily_limit
            and error.retry_after is not None
            and error.retry_after <= AUTO_RETRY_LIMIT
            and not self.retried_after_limit
        ):
            self.retried_after_limit = True
            self.retry_at = now + error.retry_after

    def due(self, now: float) -> SendAgain | None:
        """What is to be sent now that a wait is over (asked while no send is in progress)."""
        if self.retry_at and now >= self.retry_at:
            self.retry_at = 0.0
            return SendAgain(self.target)  # the same provider once more
        if self.fallback_at and now >= self.fallback_at:
            self.fallback_at = 0.0
            self.retried_after_limit = False  # the fallback may wait out a short limit once
            return SendAgain(self.fallback_to)
        return None

    def countdown(self, now: float) -> Countdown | None:
        if self.fallback_at > now:
            seconds = math.ceil(self.fallback_at - now)
            return Countdown("fallback", seconds, self.fallback_what, self.fallback_to)
        if self.retry_at > now:
            return Countdown("retry", math.ceil(self.retry_at - now))
        if self.pacing_until > now:
            return Countdown("pacing", math.ceil(self.pacing_until - now))
        return None
