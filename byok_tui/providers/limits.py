"""Rate limits as the providers state them in their response headers: what is left and when
it resets, per provider and key. Taken only from responses the user caused: never polled.

OpenAI, Groq, xAI, Mistral and DeepSeek send `x-ratelimit-{limit,remaining,reset}-{requests,
tokens}` (Groq's request figures are per day); OpenRouter `x-ratelimit-{limit,remaining,reset}`;
Anthropic `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,
reset}`; any of them `retry-after`. Values are outside text: cleaned and cut short, never a key.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from byok_tui.core.redaction import redact
from byok_tui.core.sanitize import clean_line

_RATE_HEADER = re.compile(r"^(x-ratelimit-|anthropic-ratelimit-|retry-after$)")
_MOST_HEADERS = 24
_MOST_VALUE = 64


@dataclass(frozen=True, slots=True)
class RateLimits:
    """The rate-limit headers of one response, by lower-case name."""

    headers: tuple[tuple[str, str], ...]

    @classmethod
    def stored(cls, headers: Mapping[str, str]) -> RateLimits:
        """As kept in the database (a name-to-value map)."""
        return cls(tuple(sorted(headers.items())))

    def get(self, *names: str) -> str | None:
        found = dict(self.headers)
        return next((found[name] for name in names if name in found), None)

    @property
    def requests(self) -> tuple[str | None, str | None, str | None]:
        """(remaining, limit, reset) of requests, as the provider wrote them."""
        return (
            self.get(
                "x-ratelimit-remaining-requests",
                "anthropic-ratelimit-requests-remaining",
                "x-ratelimit-remaining",
            ),
            self.get(
                "x-ratelimit-limit-requests",
                "anthropic-ratelimit-requests-limit",
                "x-ratelimit-limit",
            ),
            self.get(
                "x-ratelimit-reset-requests",
                "anthropic-ratelimit-requests-reset",
                "x-ratelimit-reset",
            ),
        )

    @property
    def tokens(self) -> tuple[str | None, str | None, str | None]:
        """(remaining, limit, reset) of tokens, as the provider wrote them."""
        return (
            self.get("x-ratelimit-remaining-tokens", "anthropic-ratelimit-tokens-remaining"),
            self.get("x-ratelimit-limit-tokens", "anthropic-ratelimit-tokens-limit"),
            self.get("x-ratelimit-reset-tokens", "anthropic-ratelimit-tokens-reset"),
        )

    def compact(self, age: float) -> str | None:
        """A few characters for the sidebar when they matter, `age` seconds after they were
        stated: a wait still running, or requests or tokens below half of the limit. Figures
        older than STALE_AFTER say nothing any more."""
        if age > STALE_AFTER:
            return None
        if self.get(DAILY_LIMIT):
            return "daily limit"
        retry = _number(self.get("retry-after"))
        if retry is not None and retry - age > 0:
            return f"wait {math.ceil(retry - age)} s"
        for (left, most, _reset), unit in ((self.requests, "req"), (self.tokens, "tok")):
            remaining, limit = _number(left), _number(most)
            if remaining is not None and limit and remaining < limit / 2:
                return f"{_short(remaining)}/{_short(limit)} {unit} left"
        return None

    def describe(self, age: float | None = None) -> str:
        """Every figure stated: `41/60 requests (reset 19s) · 149000/150000 tokens`; a wait
        already over `age` seconds after it was stated is left out."""
        parts = []
        for what, (left, most, reset) in (("requests", self.requests), ("tokens", self.tokens)):
            if left or most:
                parts.append(
                    f"{left or '?'}/{most or '?'} {what}" + (f" (reset {reset})" if reset else "")
                )
        retry = self.get("retry-after")
        waited = _number(retry)
        if retry and not (age is not None and waited is not None and age >= waited):
            parts.append(f"retry after {retry} s")
        if self.get(DAILY_LIMIT):
            parts.append("daily limit reached")
        return " · ".join(parts) or "no figures"


def age_in_words(seconds: float) -> str:
    """`12 s ago`, `5 min ago`, `3 h ago`, `2 days ago`."""
    if seconds < 90:
        return f"{max(seconds, 0):.0f} s ago"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 129_600:
        return f"{seconds / 3600:.0f} h ago"
    return f"{seconds / 86_400:.0f} days ago"


STALE_AFTER = 600.0  # seconds
# Not a header: kept beside them when an error's body said the day's quota is spent.
DAILY_LIMIT = "daily-limit"


def stated_in_error(
    found: RateLimits | None, retry_after: float | None, daily_limit: bool
) -> RateLimits | None:
    """`found` with what an error's body stated (a wait, a spent daily quota) where the
    headers did not say it: Gemini's RetryInfo, or "try again in 3.5s" in a message."""
    headers = dict(found.headers) if found is not None else {}
    if retry_after is not None and "retry-after" not in headers:
        headers["retry-after"] = str(math.ceil(retry_after))
    if daily_limit:
        headers[DAILY_LIMIT] = "reached"
    return RateLimits(tuple(sorted(headers.items()))) if headers else None


def _number(value: str | None) -> float | None:
    """A figure a provider stated, when it is a finite number (a header may say "inf")."""
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    return number if number is not None and math.isfinite(number) else None


def _short(value: float) -> str:
    return f"{value / 1000:.0f}k" if value >= 10_000 else f"{value:.0f}"


def rate_limits(headers: Mapping[str, str]) -> RateLimits | None:
    """The rate-limit headers among `headers`; None when there are none."""
    found: list[tuple[str, str]] = []
    for name, value in headers.items():
        lowered = name.lower()
        if _RATE_HEADER.match(lowered) and len(found) < _MOST_HEADERS:
            found.append((lowered, redact(clean_line(str(value)))[:_MOST_VALUE]))
    return RateLimits(tuple(sorted(found))) if found else None
