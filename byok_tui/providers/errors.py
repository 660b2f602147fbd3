"""Provider errors, typed, each with its remedy, classified by status *and* body.

Providers disagree (Google and xAI answer a bad key with 400, OpenAI reports exhausted credits
as 429 `insufficient_quota`, xAI as 403): the rules below follow the wire reference's table 13.
Every message is redacted; nothing here does I/O.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

from byok_tui.core.errors import REMEDIES, ByokError, ErrorKind, as_one_line
from byok_tui.core.records import LONGEST_WAIT
from byok_tui.core.redaction import redact
from byok_tui.core.registry import Provider
from byok_tui.core.sanitize import strip_terminal_controls

_MAX_PROVIDER_MESSAGE = 500


class ProviderError(ByokError):
    """A failed call: kind, short message, remedy, and the provider's own message if any."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        provider: Provider,
        status: int | None = None,
        provider_message: str | None = None,
        retry_after: float | None = None,
        daily_limit: bool = False,
        remedy: str | None = None,
    ) -> None:
        self.kind = kind
        self.provider_id = provider.id
        self.status = status
        # Redacted whole, then shortened: a key cut by the shortening would be missed.
        self.provider_message = (
            _shortened(strip_terminal_controls(redact(provider_message)))
            if provider_message
            else None
        )
        self.retry_after = retry_after
        self.daily_limit = daily_limit
        remedy = remedy or _remedy(kind, provider, retry_after, daily_limit)
        super().__init__(message, remedy=remedy)

    def one_line(self) -> str:
        said = f" (provider said: {self.provider_message})" if self.provider_message else ""
        return as_one_line(redact(f"{self.message}. {self.remedy}{said}"))


class SettingOutOfRangeError(ByokError):
    """A temperature or max tokens the provider does not accept: refused before any request,
    never silently changed into one it does."""

    kind = ErrorKind.USAGE

    def __init__(self, problems: list[str]) -> None:
        super().__init__(
            "; ".join(problems),
            remedy="Choose a value in the range: in the bot's config pane, or with "
            "--temperature / --max-tokens.",
        )


def check_settings(provider: Provider, temperature: float | None, max_tokens: int) -> None:
    """Raise SettingOutOfRangeError when `provider` cannot be sent these settings."""
    problems = [
        problem
        for problem in (
            provider.temperature_problem(temperature),
            provider.max_tokens_problem(max_tokens),
        )
        if problem is not None
    ]
    if problems:
        raise SettingOutOfRangeError(problems)


def _remedy(kind: ErrorKind, provider: Provider, retry_after: float | None, daily: bool) -> str:
    refused = kind in (ErrorKind.AUTH, ErrorKind.PERMISSION)
    if refused and not provider.needs_key:  # a local runtime: not about a key
        return provider.auth_remedy or "It takes no key: check what stands in front of it."
    if kind is ErrorKind.AUTH and provider.auth_remedy:
        return f"{REMEDIES[kind]} {provider.auth_remedy}"
    if kind is ErrorKind.RATE_LIMIT:
        if daily:
            return "The daily limit is reached: try again tomorrow, or pick another model."
        if retry_after is not None:
            return f"Wait {retry_after:.0f} s and retry; free-tier limits are lower."
    if kind is ErrorKind.NETWORK and not provider.needs_key:
        return f"Is {provider.display_name} running? {provider.start_remedy}".rstrip()
    return REMEDIES[kind]


_TITLES: dict[ErrorKind, str] = {
    ErrorKind.AUTH: "Invalid API key",
    ErrorKind.PERMISSION: "The key lacks permission",
    ErrorKind.RATE_LIMIT: "Rate limit reached",
    ErrorKind.BILLING: "Insufficient credits or billing",
    ErrorKind.NOT_FOUND: "Model or endpoint not found",
    ErrorKind.BAD_REQUEST: "Request refused",
    ErrorKind.TOO_LARGE: "Request too large",
    ErrorKind.OVERLOADED: "Provider overloaded or failing",
    ErrorKind.PROTOCOL: "Unexpected answer",
}

_BILLING_WORDS = re.compile(
    r"insufficient[_ ]quota|insufficient balance|credit balance is too low|"
    r"used all available credits|spending limit|spend limit|billing|payment required",
    re.IGNORECASE,
)
_BAD_KEY_WORDS = re.compile(
    r"API_KEY_INVALID|API key not valid|Incorrect API key|invalid[_ ]api[_ ]key|"
    r"authentication[_ ]fails|invalid x-api-key",
    re.IGNORECASE,
)
_DAILY_WORDS = re.compile(r"PerDay|per[- ]day|requests per day|\bRPD\b|daily", re.IGNORECASE)
_WAIT_PHRASE = re.compile(r"(?:try again|retry) in ([0-9]+(?:\.[0-9]+)?)\s*(ms|s)\b", re.I)
_GO_DURATION = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|h|m|s)")


def _parse_body(body: str) -> Any:
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if isinstance(data, list) and data and isinstance(data[0], dict):  # Gemini without alt=sse
        return data[0]
    return data


def _message_of(data: Any) -> str | None:
    """The provider's own message, from whichever of the known body shapes this is."""
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, dict):
        message = error.get("message")
        if isinstance(message, str):
            return message
    if isinstance(error, str):  # xAI, Ollama
        return error
    for field in ("message", "detail"):  # Mistral's gateway and validation shapes
        value = data.get(field)
        if isinstance(value, str):
            return value
        if value is not None:
            return json.dumps(value)
    return None


def _codes_of(data: Any) -> str:
    """Every code-like string in the body, joined, for keyword matching."""
    if not isinstance(data, dict):
        return ""
    parts: list[str] = []
    error = data.get("error")
    source = error if isinstance(error, dict) else data
    for field in ("type", "code", "status"):
        value = source.get(field)
        if isinstance(value, str | int):
            parts.append(str(value))
    details = source.get("details")
    if isinstance(details, list | dict):
        parts.append(json.dumps(details))
    return " ".join(parts)


def _seconds_from_duration(text: str) -> float | None:
    total, matched = 0.0, False
    for number, unit in _GO_DURATION.findall(text):
        matched = True
        total += float(number) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]
    return total if matched else None


def bounded_wait(seconds: float | None) -> float | None:
    """A wait read from a provider, between 0 and LONGEST_WAIT; None when it is no number."""
    if seconds is None or math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), LONGEST_WAIT)


def retry_after_seconds(
    headers: Mapping[str, str], data: Any, message: str | None, now: float | None = None
) -> float | None:
    """How long to wait, in the wire reference's order of preference (section 13), bounded
    (bounded_wait)."""
    return bounded_wait(_stated_wait(headers, data, message, now))


def _stated_wait(
    headers: Mapping[str, str], data: Any, message: str | None, now: float | None = None
) -> float | None:
    now = time.time() if now is None else now
    lowered = {k.lower(): v for k, v in headers.items()}
    if "retry-after-ms" in lowered:
        try:
            return float(lowered["retry-after-ms"]) / 1000
        except ValueError:
            pass
    if "retry-after" in lowered:
        value = lowered["retry-after"].strip()
        try:
            return float(value)
        except ValueError:
            try:
                return max(0.0, parsedate_to_datetime(value).timestamp() - now)
            except (TypeError, ValueError):
                pass
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        for detail in data["error"].get("details") or []:
            if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("RetryInfo"):
                seconds = _seconds_from_duration(str(detail.get("retryDelay", "")))
                if seconds is not None:
                    return seconds
    for name in ("x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"):
        if name in lowered:
            seconds = _seconds_from_duration(lowered[name])
            if seconds is not None:
                return seconds
    if "x-ratelimit-reset" in lowered:  # OpenRouter: epoch milliseconds
        try:
            return max(0.0, float(lowered["x-ratelimit-reset"]) / 1000 - now)
        except ValueError:
            pass
    if "ratelimitbysize-reset" in lowered:  # Mistral: seconds
        try:
            return float(lowered["ratelimitbysize-reset"])
        except ValueError:
            pass
    if message:
        found = _WAIT_PHRASE.search(message)
        if found:
            amount = float(found.group(1))
            return amount / 1000 if found.group(2).lower() == "ms" else amount
    return None


def classify_http_error(
    provider: Provider, status: int, headers: Mapping[str, str], body: str
) -> ProviderError:
    """Turn an HTTP error answer into a typed, redacted ProviderError."""
    data = _parse_body(body)
    message = _message_of(data)
    codes = _codes_of(data)
    words = f"{codes} {message or ''}"
    looks_html = data is None and body.lstrip()[:1] == "<"

    if looks_html and status < 500:
        kind = ErrorKind.PROTOCOL
        message = None
    elif status == 401 or (status in (400, 403) and _BAD_KEY_WORDS.search(words)):
        kind = ErrorKind.AUTH
    elif status == 402 or (status in (400, 403, 429) and _BILLING_WORDS.search(words)):
        kind = ErrorKind.BILLING
    elif status in (429, 498):
        kind = ErrorKind.RATE_LIMIT
    elif status == 403:
        kind = ErrorKind.PERMISSION
    elif status == 404:
        kind = ErrorKind.NOT_FOUND
    elif status == 413:
        kind = ErrorKind.TOO_LARGE
    elif status >= 500:
        kind = ErrorKind.OVERLOADED
    else:
        kind = ErrorKind.BAD_REQUEST

    retry_after = None
    daily = False
    if kind in (ErrorKind.RATE_LIMIT, ErrorKind.OVERLOADED):
        retry_after = retry_after_seconds(headers, data, message)
        daily = kind is ErrorKind.RATE_LIMIT and bool(_DAILY_WORDS.search(words))
    title = _TITLES.get(kind, "Request failed")
    if kind in (ErrorKind.AUTH, ErrorKind.PERMISSION) and not provider.needs_key:
        title = "Not authorized" if kind is ErrorKind.AUTH else "Refused"  # it takes no key
    if looks_html:
        title = "The server answered with an HTML page instead of the provider's API"
    return ProviderError(
        kind,
        f"{provider.display_name}: {status} {title}",
        provider=provider,
        status=status,
        provider_message=message or None,
        retry_after=retry_after,
        daily_limit=daily,
    )


def stream_error(provider: Provider, payload: Any) -> ProviderError:
    """An error that arrived inside a stream after HTTP 200."""
    message = _message_of(payload) or "the provider reported an error mid-stream"
    codes = _codes_of(payload)
    status_by_code = {
        "overloaded_error": 529,
        "rate_limit_error": 429,
        "authentication_error": 401,
        "permission_error": 403,
        "billing_error": 402,
        "invalid_request_error": 400,
        "not_found_error": 404,
    }
    status = next((s for code, s in status_by_code.items() if code in codes), 500)
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        status = error["code"]
    classified = classify_http_error(provider, status, {}, json.dumps(payload))
    classified.provider_message = _shortened(strip_terminal_controls(redact(message)))
    return classified


def _shortened(message: str) -> str:
    """A provider's message cut to a readable length (always after redaction)."""
    if len(message) <= _MAX_PROVIDER_MESSAGE:
        return message
    return message[: _MAX_PROVIDER_MESSAGE - 1] + "…"


def protocol_error(provider: Provider, what: str) -> ProviderError:
    return ProviderError(ErrorKind.PROTOCOL, f"{provider.display_name}: {what}", provider=provider)
