"""Checking a bot configuration that came from outside (a share link or an import).

Such input is untrusted. Only the known configuration fields are taken, each with its type and
length checked; a provider id the registry does not know is refused; and anything that could
carry a key or send one elsewhere (`k`, keys, base URLs, headers, hosts) is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from byok_tui.core.errors import ByokError, ErrorKind
from byok_tui.core.records import BotConfig
from byok_tui.core.registry import CUSTOM_ID, UnknownProviderError, get_provider
from byok_tui.core.sanitize import clean_line, has_terminal_controls

NAME_MAX = 100
MODEL_MAX = 200
SYSTEM_PROMPT_MAX = 20_000

KNOWN_FIELDS = (
    "name",
    "provider",
    "model",
    "system_prompt",
    "temperature",
    "max_tokens",
    "fallbacks",
)
# Named in the report so that the user knows a link tried to carry or redirect a key.
KEY_CARRYING_FIELDS = frozenset(
    {
        "k",
        "key",
        "api_key",
        "apikey",
        "apiKey",
        "token",
        "authorization",
        "headers",
        "base_url",
        "baseUrl",
        "baseURL",
        "url",
        "endpoint",
        "host",
        "proxy",
    }
)


class BotInputError(ByokError):
    kind = ErrorKind.USAGE

    def __init__(self, message: str) -> None:
        super().__init__(message, remedy="Ask the sender for a new link or file; nothing changed.")


@dataclass(frozen=True, slots=True)
class CheckedBot:
    config: BotConfig
    dropped: tuple[str, ...]  # fields that were present and not taken
    dropped_key_fields: tuple[str, ...]  # the dropped ones that could carry or redirect a key


def _text(data: dict[str, Any], field: str, limit: int, *, required: bool) -> str:
    value = data.get(field, None if required else "")
    if not isinstance(value, str):
        raise BotInputError(f"the bot's {field} must be text")
    if required and not value.strip():
        raise BotInputError(f"the bot's {field} is empty")
    if len(value) > limit:
        raise BotInputError(f"the bot's {field} is longer than {limit} characters")
    one_line = field != "system_prompt"  # a prompt may hold new lines and tabs
    if has_terminal_controls(value) or (one_line and ("\n" in value or "\t" in value)):
        raise BotInputError(f"the bot's {field} contains control characters")
    return value


def _fallbacks(value: Any) -> tuple[str, ...]:
    """A bot's fallbacks from outside: a short list of `provider:model`, providers known."""
    from byok_tui.providers.fallbacks import MOST_FALLBACKS, parse_fallbacks

    if not isinstance(value, list) or len(value) > MOST_FALLBACKS:
        raise BotInputError(f"the bot's fallbacks must be a list of at most {MOST_FALLBACKS}")
    if not all(isinstance(item, str) and len(item) <= MODEL_MAX for item in value):
        raise BotInputError("each of the bot's fallbacks must be provider:model text")
    try:
        return tuple(str(f) for f in parse_fallbacks([clean_line(item) for item in value]))
    except ByokError as error:
        raise BotInputError(f"the bot's {error.message}") from None


def check_bot_fields(data: Any) -> CheckedBot:
    if not isinstance(data, dict):
        raise BotInputError("a bot must be a JSON object")
    provider_id = _text(data, "provider", 40, required=True)
    try:
        provider = get_provider(provider_id)
    except UnknownProviderError as error:
        if CUSTOM_ID.fullmatch(provider_id):  # maybe a provider of the sender's own
            raise BotInputError(
                f"unknown provider {provider_id!r}: if the sender defined it, define it here "
                f"first (`byok-tui provider add {provider_id} --base-url URL`, or Settings > "
                "Add provider: a bot never says where its provider is), then import it again"
            ) from None
        raise BotInputError(str(error)) from None
    temperature = data.get("temperature")
    number = isinstance(temperature, int | float) and not isinstance(temperature, bool)
    if temperature is not None and not number:
        raise BotInputError("the bot's temperature must be a number")
    max_tokens = data.get("max_tokens", 4096)
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise BotInputError("the bot's max_tokens must be a whole number")
    # The provider's own ranges (an int is compared as it is: 10**400 is never a float).
    problem = provider.temperature_problem(temperature) or provider.max_tokens_problem(max_tokens)
    if problem:
        raise BotInputError(f"the bot's {problem}")
    config = BotConfig(
        name=_text(data, "name", NAME_MAX, required=True).strip(),
        provider=provider_id,
        model=_text(data, "model", MODEL_MAX, required=True).strip(),
        system_prompt=_text(data, "system_prompt", SYSTEM_PROMPT_MAX, required=False),
        temperature=float(temperature) if temperature is not None else None,
        max_tokens=max_tokens,
        fallbacks=_fallbacks(data.get("fallbacks", [])),
    )
    dropped = tuple(sorted(str(f) for f in data if f not in KNOWN_FIELDS))
    return CheckedBot(config, dropped, tuple(f for f in dropped if f in KEY_CARRYING_FIELDS))


def bot_fields(config: BotConfig) -> dict[str, Any]:
    """The shareable fields of a bot: never `k`, never any key."""
    return {
        "name": config.name,
        "provider": config.provider,
        "model": config.model,
        "system_prompt": config.system_prompt,
        "temperature": config.temperature,
        "max_tokens": config.max_tokens,
        "fallbacks": list(config.fallbacks),
    }
