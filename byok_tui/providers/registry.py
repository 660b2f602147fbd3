"""The provider registry: every fact about a provider, read from `providers.toml`.

Nothing else in byok-tui lists providers; code that needs the list calls `providers()`.
Never imports Textual or httpx.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

ProviderKind = Literal["remote", "local"]


class UnknownProviderError(ValueError):
    """A provider id that the registry does not know."""

    def __init__(self, provider_id: str) -> None:
        self.provider_id = provider_id
        valid = ", ".join(provider_ids())
        super().__init__(f"unknown provider {provider_id!r}; valid ids: {valid}")


@dataclass(frozen=True, slots=True)
class Provider:
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
    auth_remedy: str

    @property
    def needs_key(self) -> bool:
        return self.kind == "remote"

    def key_shape_matches(self, key: str) -> bool:
        """True when `key` has this provider's usual shape (a hint, never a check)."""
        return bool(self.key_pattern) and re.fullmatch(self.key_pattern, key) is not None


def _parse(entry: dict[str, object]) -> Provider:
    def text(field: str) -> str:
        value = entry[field]
        if not isinstance(value, str):
            raise TypeError(f"registry field {field!r} must be a string")
        return value

    kind = text("kind")
    if kind not in ("remote", "local"):
        raise ValueError(f"registry kind must be remote or local, not {kind!r}")
    env_vars = entry.get("env_vars", [])
    if not isinstance(env_vars, list) or not all(isinstance(v, str) for v in env_vars):
        raise TypeError("registry field 'env_vars' must be a list of strings")
    return Provider(
        id=text("id"),
        display_name=text("name"),
        kind="remote" if kind == "remote" else "local",
        family=text("family"),
        base_url=text("base_url"),
        key_carrier=text("key_carrier"),
        env_vars=tuple(env_vars),
        key_hint=text("key_hint"),
        key_pattern=text("key_pattern"),
        console_url=text("console_url"),
        free_tier=text("free_tier"),
        auth_remedy=text("auth_remedy"),
    )


@cache
def providers() -> tuple[Provider, ...]:
    """All providers, in the registry's order (remote providers first, then local runtimes)."""
    raw = resources.files(__package__).joinpath("providers.toml").read_text(encoding="utf-8")
    entries = tomllib.loads(raw)["provider"]
    return tuple(_parse(entry) for entry in entries)


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
