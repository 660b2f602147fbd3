"""Fallbacks: when a provider cannot answer, the bot's next `provider:model`, with that
provider's own key.

A fallback is tried only for a failure before any text arrived that another provider may not
share: a 429 (with a wait above SHORT_WAIT seconds, or none stated), a 402 or no credit, a
5xx, a time-out or a connection that failed. Never for a 400, 401, 403 or a content refusal:
those are the user's to fix, and another provider would be sent the same mistake. A 429 with a
short wait is waited out and retried once first. Key failover inside the provider comes first
(ConversationService does it before the error reaches here). No Textual here: the app (with a
countdown the user can stop) and `byok-tui ask` both use it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from byok_tui.core.errors import ByokError, ErrorKind
from byok_tui.core.records import BotConfig
from byok_tui.core.registry import UnknownProviderError, get_provider

SHORT_WAIT = 10.0  # seconds: a 429 asking no longer than this is waited out, then retried
MOST_FALLBACKS = 5
# The failures another provider may not share.
FALLBACK_KINDS = frozenset(
    {
        ErrorKind.RATE_LIMIT,
        ErrorKind.BILLING,
        ErrorKind.OVERLOADED,
        ErrorKind.TIMEOUT,
        ErrorKind.NETWORK,
    }
)


class FallbackError(ByokError):
    """A fallback that is not `provider:model` with a known provider."""

    kind = ErrorKind.USAGE


@dataclass(frozen=True, slots=True)
class Fallback:
    provider_id: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider_id}:{self.model}"


def parse_fallback(text: str) -> Fallback:
    """`provider:model` (the model may hold colons: `ollama:llama3.2:3b`)."""
    provider_id, colon, model = text.strip().partition(":")
    provider_id, model = provider_id.strip().lower(), model.strip()
    if not colon or not provider_id or not model:
        raise FallbackError(
            f"{text.strip()!r} is not a fallback",
            remedy="Write it as provider:model, for example groq:llama-3.3-70b-versatile.",
        )
    try:
        get_provider(provider_id)
    except UnknownProviderError as error:
        raise FallbackError(f"fallback {text.strip()!r}: {error}", remedy=error.remedy) from None
    return Fallback(provider_id, model)


def parse_fallbacks(texts: list[str] | tuple[str, ...]) -> tuple[Fallback, ...]:
    found = tuple(parse_fallback(t) for t in texts if t.strip())
    if len(found) > MOST_FALLBACKS:
        raise FallbackError(f"a bot has at most {MOST_FALLBACKS} fallbacks")
    return found


def short_wait(error: ByokError) -> float | None:
    """The wait of a 429 that asks for SHORT_WAIT seconds or less (waited out, then the
    request is sent once more before any fallback); None otherwise."""
    wait = getattr(error, "retry_after", None)
    if error.kind is ErrorKind.RATE_LIMIT and wait is not None and wait <= SHORT_WAIT:
        return float(wait)
    return None


def falls_back(error: ByokError, *, text_arrived: bool) -> bool:
    """Whether another provider should be asked after `error`. Never once text arrived (the
    reply is the user's to keep or continue), never for a mistake another provider would be
    sent too. A 429 for a daily quota falls back at once: its wait is hours."""
    return not text_arrived and error.kind in FALLBACK_KINDS


def what_happened(provider_id: str, error: ByokError) -> str:
    """The failure in a few words, as the countdown and `ask` say it: `openai: rate-limited`."""
    status = getattr(error, "status", None)
    words = {
        ErrorKind.RATE_LIMIT: "rate-limited",
        ErrorKind.BILLING: "out of credit",
        ErrorKind.OVERLOADED: f"server error ({status})" if status else "server error",
        ErrorKind.TIMEOUT: "timed out",
        ErrorKind.NETWORK: "unreachable",
    }.get(error.kind, error.kind.value)
    return f"{provider_id}: {words}"


def fallback_config(config: BotConfig, fallback: Fallback) -> BotConfig:
    """The bot's settings for a request to `fallback`: its provider and model, the same
    system prompt and length; the temperature only where that provider accepts it (else the
    model's default, rather than a refusal)."""
    provider = get_provider(fallback.provider_id)
    temperature = config.temperature
    if provider.temperature_problem(temperature) is not None:
        temperature = None
    max_tokens = config.max_tokens
    if provider.max_tokens_problem(max_tokens) is not None:
        max_tokens = provider.max_tokens_range[1]
    return replace(
        config,
        provider=fallback.provider_id,
        model=fallback.model,
        temperature=temperature,
        max_tokens=max_tokens,
        fallbacks=(),
    )
