"""The provider registry: every fact about a provider, read from `providers.toml`, and the
providers the user defined (custom OpenAI-compatible endpoints, from the config file).

Nothing else in byok-tui lists providers; code that needs the list calls `providers()`.
Never imports Textual or httpx.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path
from typing import Literal, NamedTuple, TypeVar

ProviderKind = Literal["remote", "local"]
# Whether a user-defined provider takes a key: must have one, may have one, or never does.
KeyUse = Literal["required", "optional", "none"]
KEY_USES: tuple[KeyUse, ...] = ("required", "optional", "none")
T = TypeVar("T")
# A user-defined provider's id: it names its key's entry (`app-apikey-<id>`), so no colon.
CUSTOM_ID = re.compile(r"[a-z][a-z0-9_-]{0,31}")

# A provider's ranges unless its entry says otherwise: the OpenAI format's temperature, and
# any reply length a model could be asked for.
TEMPERATURE_RANGE = (0.0, 2.0)
MAX_TOKENS_RANGE = (1, 1_000_000)
# The context window assumed for a model when neither the registry nor the provider's model
# list states one: the smallest that current chat models have, so a conversation trimmed to
# it is never refused for its length.
CONTEXT_TOKENS = 32_768


class UnknownProviderError(ValueError):
    """A provider id that the registry does not know (one the user defined may have been
    removed from the config file since a bot chose it)."""

    remedy = (
        "`byok-tui provider list` shows the providers you defined; `byok-tui provider add` "
        "defines one."
    )

    def __init__(self, provider_id: str) -> None:
        self.provider_id = provider_id
        valid = ", ".join(provider_ids())
        super().__init__(f"unknown provider {provider_id!r}; valid ids: {valid}")


# A NamedTuple, not a dataclass: its module loads before the first frame (launch.py says why).
class Model(NamedTuple):
    id: str
    display_name: str
    family: str
    free: bool = False
    requests_per_minute: int | None = None  # the client paces itself to this when set
    # Free-tier requests per day: counted locally, and treated like a budget when set.
    free_requests_per_day: int | None = None
    accepts_temperature: bool = True
    discovered: bool = False  # found through the provider's model list, not in the registry
    # Whether it takes images; None: not known (a model the registry does not list), so an
    # image is sent and the provider says whether it takes it.
    takes_images: bool | None = None
    # Its context window in tokens, where the registry states it (else the provider's).
    context_tokens: int | None = None
    # Whether it takes tools (function calling); None: not known (tools are sent, and the
    # provider says if it takes none), False: none is ever sent to it.
    takes_tools: bool | None = None


class Provider(NamedTuple):
    id: str
    display_name: str
    kind: ProviderKind
    family: str
    base_url: str
    key_carrier: str
    env_vars: tuple[str, ...]
    key_hint: str
    key_pattern: str
    console_url: str
    free_tier: str
    auth_remedy: str  # for a local runtime, the whole remedy when it refuses a request
    start_remedy: str  # a local runtime: how to start it when it does not answer
    default_model: str
    token_param: str
    accepts_temperature: bool
    temperature_range: tuple[float, float]
    max_tokens_range: tuple[int, int]
    stream_usage_option: bool
    public_model_list: bool
    models: tuple[Model, ...]
    balance_path: str = ""  # below the base URL: where a key's credit is stated ("": nowhere)
    balance_shape: str = ""  # how that answer is read (providers/balance.py)
    custom: bool = False  # defined by the user in the config file, not built in
    key_optional: bool = False  # takes a key, but is called without one when none is set
    # The chat service whose data export `byok-tui import --from` reads into a bot on this
    # provider (chatgpt, claude), if any.
    history_from: str = ""
    # The context window of its models unless one states its own (registry or model list).
    context_tokens: int = CONTEXT_TOKENS

    @property
    def needs_key(self) -> bool:
        """Whether the provider takes a key (one is set for it; maybe not required)."""
        return self.kind == "remote"

    @property
    def key_use(self) -> KeyUse:
        if not self.needs_key:
            return "none"
        return "optional" if self.key_optional else "required"

    def model(self, model_id: str) -> Model:
        """The registry's entry for `model_id`, or one with this provider's defaults."""
        for model in self.models:
            if model.id == model_id:
                return model
        return Model(
            id=model_id,
            display_name=model_id,
            family="",
            accepts_temperature=self.accepts_temperature,
            discovered=True,
        )

    def context_of(self, model_id: str, listed: int | None = None) -> int:
        """How many tokens `model_id` takes in: the registry's figure for it, else what the
        provider's model list said (`listed`), else the provider's."""
        return self.model(model_id).context_tokens or listed or self.context_tokens

    def temperature_problem(self, temperature: float | None) -> str | None:
        """Why this provider cannot be sent `temperature`, in words; None when it can."""
        low, high = self.temperature_range
        if temperature is None or low <= temperature <= high:  # NaN fails both comparisons
            return None
        # An int like 10**400 cannot be shown as a float; NaN is shown as nan.
        shown = "that large" if abs(temperature) >= 1e9 else f"{temperature:g}"
        return f"temperature {shown} is outside {self.display_name}'s range, {low:g} to {high:g}"

    def max_tokens_problem(self, max_tokens: int) -> str | None:
        """Why this provider cannot be sent `max_tokens`, in words; None when it can."""
        low, high = self.max_tokens_range
        if low <= max_tokens <= high:
            return None
        within = f"{self.display_name}'s range, {low:,} to {high:,}"
        return f"max tokens {max_tokens} is outside {within}"

    def key_shape_matches(self, key: str) -> bool:
        """True when `key` has this provider's usual shape (a hint, never a check)."""
        return bool(self.key_pattern) and re.fullmatch(self.key_pattern, key) is not None


def _field(entry: dict[str, object], name: str, kind: type[T], default: T | None = None) -> T:
    value = entry.get(name, default)
    if not isinstance(value, kind):
        raise TypeError(f"registry field {name!r} must be a {kind.__name__}")
    return value


def _whole_or_none(entry: dict[str, object], name: str) -> int | None:
    value = entry.get(name)
    if value is not None and not isinstance(value, int):
        raise TypeError(f"registry field {name!r} must be an integer")
    return value


def _maybe(entry: dict[str, object], name: str, default: bool | None) -> bool | None:
    value = entry.get(name, default)
    if value is not None and not isinstance(value, bool):
        raise TypeError(f"registry field {name!r} must be true or false")
    return value


def _images(entry: dict[str, object], default: bool | None) -> bool | None:
    return _maybe(entry, "images", default)


def _parse_model(
    entry: dict[str, object],
    provider_temperature: bool,
    provider_images: bool | None = None,
    provider_tools: bool | None = None,
) -> Model:
    rpm, rpd = _whole_or_none(entry, "rpm"), _whole_or_none(entry, "rpd")
    return Model(
        id=_field(entry, "id", str),
        display_name=_field(entry, "name", str),
        family=_field(entry, "family", str, ""),
        free=_field(entry, "free", bool, False),
        requests_per_minute=rpm,
        free_requests_per_day=rpd,
        accepts_temperature=_field(entry, "temperature", bool, provider_temperature),
        takes_images=_images(entry, provider_images),
        context_tokens=_whole_or_none(entry, "context"),
        takes_tools=_maybe(entry, "tools", provider_tools),
    )


def _pair(entry: dict[str, object], name: str, default: tuple[float, float]) -> tuple[float, float]:
    value = entry.get(name, list(default))
    if not isinstance(value, list) or len(value) != 2:
        raise TypeError(f"registry field {name!r} must be a [low, high] pair")
    low, high = float(value[0]), float(value[1])
    if not low < high:
        raise ValueError(f"registry field {name!r} must have low < high")
    return low, high


def _key_carrier(value: str) -> str:
    """Where the key goes: `header:<name>`, `header:authorization-bearer`, `query:<name>`, or
    `none`; the wire code reads it (wire.carry_key)."""
    if value != "none" and not re.fullmatch(r"(header|query):[a-z][a-z0-9-]*", value):
        raise ValueError(f"registry field 'key_carrier' cannot be {value!r}")
    return value


def _parse(entry: dict[str, object]) -> Provider:
    def text(name: str) -> str:
        return _field(entry, name, str)

    kind = text("kind")
    if kind not in ("remote", "local"):
        raise ValueError(f"registry kind must be remote or local, not {kind!r}")
    env_vars = _field(entry, "env_vars", list, [])
    temperature = _field(entry, "accepts_temperature", bool, True)
    raw_models = _field(entry, "models", list, [])
    max_tokens = _pair(entry, "max_tokens_range", MAX_TOKENS_RANGE)
    return Provider(
        id=text("id"),
        display_name=text("name"),
        kind="remote" if kind == "remote" else "local",
        family=text("family"),
        base_url=text("base_url"),
        key_carrier=_key_carrier(text("key_carrier")),
        env_vars=tuple(str(v) for v in env_vars),
        key_hint=text("key_hint"),
        key_pattern=text("key_pattern"),
        console_url=text("console_url"),
        free_tier=text("free_tier"),
        auth_remedy=text("auth_remedy"),
        start_remedy=_field(entry, "start_remedy", str, ""),
        default_model=text("default_model"),
        token_param=text("token_param"),
        accepts_temperature=temperature,
        temperature_range=_pair(entry, "temperature_range", TEMPERATURE_RANGE),
        max_tokens_range=(int(max_tokens[0]), int(max_tokens[1])),
        stream_usage_option=_field(entry, "stream_usage_option", bool, False),
        public_model_list=_field(entry, "public_model_list", bool, False),
        models=tuple(
            _parse_model(m, temperature, _images(entry, None), _maybe(entry, "tools", None))
            for m in raw_models
        ),
        balance_path=_field(entry, "balance_path", str, ""),
        balance_shape=_field(entry, "balance_shape", str, ""),
        history_from=_field(entry, "history_from", str, ""),
        context_tokens=_field(entry, "context", int, CONTEXT_TOKENS),
    )


@cache
def _registry_file() -> dict[str, object]:
    return tomllib.loads(Path(__file__).with_name("providers.toml").read_text(encoding="utf-8"))


@cache
def builtin_providers() -> tuple[Provider, ...]:
    """The providers byok-tui knows of itself, in the registry's order."""
    entries = _field(_registry_file(), "provider", list)
    return tuple(_parse(entry) for entry in entries)


_custom: tuple[Provider, ...] = ()


def history_provider(service: str) -> Provider:
    """The provider whose chat service's data export `service` is (chatgpt: OpenAI)."""
    return next(p for p in builtin_providers() if p.history_from == service)


def providers() -> tuple[Provider, ...]:
    """All providers: the built-in ones in the registry's order (remote providers first, then
    local runtimes), then those the user defined, in the config file's order."""
    return builtin_providers() + _custom


def use_custom_providers(found: tuple[Provider, ...]) -> None:
    """The user-defined providers from now on (read from the config file at start, and
    again when one is added or removed)."""
    global _custom
    _custom = found


def custom_provider(
    provider_id: str,
    *,
    name: str,
    base_url: str,
    models: tuple[tuple[str, str], ...] = (),
    key: KeyUse = "required",
    default_model: str = "",
) -> Provider:
    """A user-defined OpenAI-compatible provider: the registry's template for the kind, with
    the user's id, name, base URL, models ((id, name) pairs) and key setting. Raises
    ValueError for an id that is malformed or is a built-in provider's."""
    if not CUSTOM_ID.fullmatch(provider_id):
        raise ValueError(
            f"{provider_id!r} is not a provider id: 1-32 lower-case letters, digits, '-' or "
            "'_', starting with a letter"
        )
    if provider_id in {p.id for p in builtin_providers()}:
        raise ValueError(f"{provider_id!r} is a built-in provider; choose another id")
    templates = _field(_registry_file(), "custom", dict)
    template = _field(templates, "openai-compatible", dict)
    temperature = _field(template, "accepts_temperature", bool, True)
    listed = tuple(
        Model(id=model_id, display_name=shown or model_id, family="") for model_id, shown in models
    )
    return Provider(
        id=provider_id,
        display_name=name or provider_id,
        kind="local" if key == "none" else "remote",
        family=_field(template, "family", str),
        base_url=base_url.rstrip("/"),
        key_carrier="none" if key == "none" else _key_carrier(_field(template, "key_carrier", str)),
        env_vars=(),
        key_hint="the key this server's operator gave you",
        key_pattern="",
        console_url=base_url,
        free_tier="",
        auth_remedy="",
        start_remedy=f"Make sure the server at {base_url} is running.",
        default_model=default_model or (listed[0].id if listed else ""),
        token_param=_field(template, "token_param", str),
        accepts_temperature=temperature,
        temperature_range=TEMPERATURE_RANGE,
        max_tokens_range=MAX_TOKENS_RANGE,
        stream_usage_option=_field(template, "stream_usage_option", bool, False),
        public_model_list=_field(template, "public_model_list", bool, True),
        models=listed,
        custom=True,
        key_optional=key == "optional",
    )


def provider_ids() -> tuple[str, ...]:
    return tuple(p.id for p in providers())


def get_provider(provider_id: str) -> Provider:
    for provider in providers():
        if provider.id == provider_id:
            return provider
    raise UnknownProviderError(provider_id)


def key_providers() -> tuple[Provider, ...]:
    """The providers that take an API key (every remote one)."""
    return tuple(p for p in providers() if p.needs_key)


def providers_matching_key_shape(key: str) -> tuple[Provider, ...]:
    """Providers whose known key shape `key` has: used to warn about a mismatched selector."""
    return tuple(p for p in key_providers() if p.key_shape_matches(key))


def key_mismatch_warning(provider: Provider, key: str) -> str | None:
    """A warning when `key` looks like another provider's key (the commonest cause of "No API
    key" and 401 is a provider selector that does not match the key). Never a refusal.
    """
    if not key or provider.key_shape_matches(key):
        return None
    others = [p for p in providers_matching_key_shape(key) if p.id != provider.id]
    if not others:
        return None
    names = " or ".join(p.display_name for p in others)
    article = "an" if names[:1].upper() in "AEIOU" else "a"
    return f"This looks like {article} {names} key, but the provider is {provider.display_name}."
