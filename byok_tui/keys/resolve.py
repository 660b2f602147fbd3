"""Key resolution for a call, the one function every caller uses.

Order: the bot's per-bot key, else the global entry of the bot's provider, else the
provider's conventional environment variable, else "No API key". The store is read again on
every call, so a key rotated anywhere (the app, the CLI, an edit of the file) is used at once.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from byok_tui.errors import REMEDIES, ByokError, ErrorKind
from byok_tui.key_text import first_bad_character
from byok_tui.keys.base import KeyStore, entry_name, mask_key, normalize_key
from byok_tui.records import KeySource
from byok_tui.redaction import remember_secret

log = logging.getLogger(__name__)


class KeySpec(Protocol):
    """What resolution needs to know of a provider (the registry's Provider has it)."""

    @property
    def id(self) -> str: ...
    @property
    def display_name(self) -> str: ...
    @property
    def env_vars(self) -> tuple[str, ...]: ...
    @property
    def needs_key(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class ResolvedKey:
    # repr=False: a key must not show up in a repr, a debugger or an assertion message.
    value: str = field(repr=False)
    source: KeySource
    origin: str  # the entry name, the environment variable, or "" for per-bot / local

    def describe(self) -> str:
        """Which key the next message uses, with no more of it than `mask_key` shows."""
        if self.source is KeySource.LOCAL_RUNTIME:
            return "local runtime, no key"
        if self.source is KeySource.ENVIRONMENT:
            return f"from {self.origin}"
        return f"{self.source.value} key {mask_key(self.value)}"


class UnusableKeyError(ByokError):
    """The key found holds a character no key has: refused before any request is made."""

    kind = ErrorKind.AUTH

    def __init__(self, spec: KeySpec, key: ResolvedKey, position: int, described: str) -> None:
        where = {
            KeySource.PER_BOT: "the bot's per-bot key",
            KeySource.GLOBAL: f"the stored {spec.display_name} key",
            KeySource.ENVIRONMENT: key.origin,
        }.get(key.source, "the key")
        super().__init__(
            f"Invalid API key for {spec.display_name}: character {position} of {where} is "
            f"{described}",
            remedy=f"Paste the key again (Settings, ctrl+s, or `byok-tui keys set {spec.id}`); "
            "nothing was sent.",
        )


class NoApiKeyError(ByokError):
    kind = ErrorKind.NO_KEY

    def __init__(self, spec: KeySpec) -> None:
        self.provider_id = spec.id
        env_hint = " or ".join(spec.env_vars)
        where = f"`byok-tui keys set {spec.id}`, Settings > API Keys, or {env_hint}"
        super().__init__(
            f"No API key for {spec.display_name}",
            remedy=f"{REMEDIES[ErrorKind.NO_KEY]} Set one with {where}.",
        )


def resolve_key(
    spec: KeySpec,
    store: KeyStore,
    *,
    bot_key: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> ResolvedKey:
    """The key for one call to `spec`'s provider and where it came from.

    Raises NoApiKeyError before anything touches the network; KeyStoreError when the store
    cannot be read and no per-bot key makes reading it unnecessary.
    """
    resolved = _resolve(spec, store, bot_key, os.environ if environ is None else environ)
    if resolved is None:
        log.debug("no key for %s", spec.id)
        raise NoApiKeyError(spec)
    bad = first_bad_character(resolved.value) if spec.needs_key else None
    if bad is not None:  # got in some other way (an edited file, the environment)
        raise UnusableKeyError(spec, resolved, *bad)
    log.debug("key for %s: %s %s", spec.id, resolved.source.value, resolved.origin)
    return resolved


def _resolve(
    spec: KeySpec, store: KeyStore, bot_key: str | None, environ: Mapping[str, str]
) -> ResolvedKey | None:
    if not spec.needs_key:
        # A placeholder for the local runtime, which takes no key: its id, never stored or sent.
        return ResolvedKey(spec.id, KeySource.LOCAL_RUNTIME, "")
    per_bot = normalize_key(bot_key or "")
    if per_bot:
        remember_secret(per_bot)
        return ResolvedKey(per_bot, KeySource.PER_BOT, "")
    entry = entry_name(spec.id)
    stored = store.get(entry)
    if stored:
        return ResolvedKey(stored, KeySource.GLOBAL, entry)
    for variable in spec.env_vars:
        value = normalize_key(environ.get(variable, ""))
        if value:
            remember_secret(value)
            return ResolvedKey(value, KeySource.ENVIRONMENT, variable)
    return None


def remember_environment_keys(specs: tuple[KeySpec, ...], environ: Mapping[str, str]) -> None:
    """Register every provider key in the environment with the redaction layer."""
    for spec in specs:
        for variable in spec.env_vars:
            remember_secret(normalize_key(environ.get(variable, "")))
