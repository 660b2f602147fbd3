"""Key resolution for a call, the one function every caller uses.

Order: a label asked for (`ask --key`), else the bot's per-bot key, else the bot's per-bot
command, else the labelled key the bot uses, else the provider's default key (stored, or
printed by its command), else the provider's conventional environment variable, else "No API
key". The store is read again on every call, so a key rotated anywhere (the app, the CLI, an
edit of the file) is used at once; a command's key is held as long as the user chose.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol

from byok_tui.core.errors import REMEDIES, ByokError, ErrorKind
from byok_tui.core.key_records import TAKES_NO_KEY, KeySource
from byok_tui.core.key_text import first_bad_character
from byok_tui.core.redaction import remember_secret
from byok_tui.keys.base import DEFAULT_LABEL, KeyStore, entry_name, mask_key, normalize_key
from byok_tui.keys.command import KeyCommands, program_of
from byok_tui.keys.index import KeyIndex, read_index

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
    @property
    def key_optional(self) -> bool: ...
    @property
    def custom(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class ResolvedKey:
    # repr=False: a key must not show up in a repr, a debugger or an assertion message.
    value: str = field(repr=False)  # "" while the command that prints it has not run
    source: KeySource
    origin: str  # the entry name, the environment variable, or "" for per-bot / local
    label: str = ""  # a labelled key's label
    command: str = field(default="", repr=False)  # the command that prints the key, if any
    # Said once, when the command has just printed the key: it looks like another provider's
    # key (a pasted key is warned of as it is pasted).
    warning: str = ""

    @property
    def needs_running(self) -> bool:
        return bool(self.command) and not self.value

    @property
    def name(self) -> str:
        """Which of the provider's keys this is, in notices: `default`, a label, `per-bot`,
        or the environment variable."""
        if self.source is KeySource.LABELLED:
            return self.label
        if self.source is KeySource.ENVIRONMENT:
            return self.origin
        return {KeySource.GLOBAL: DEFAULT_LABEL}.get(self.source, self.source.value)

    @property
    def source_text(self) -> str:
        """Where the key came from, as replies and the request log keep it (`global`,
        `key work`, `per-bot from command pass`): never any of the key."""
        base = f"key {self.label}" if self.source is KeySource.LABELLED else self.source.value
        return f"{base} from command {program_of(self.command)}" if self.command else base

    def describe(self) -> str:
        """Which key the next message uses, with no more of it than `mask_key` shows."""
        if self.source is KeySource.LOCAL_RUNTIME:
            return "local runtime, no key"
        if self.source is KeySource.NONE:
            if self.origin == TAKES_NO_KEY:
                return "no key (it takes none)"
            return "no key (this provider's key is optional)"
        if self.source is KeySource.ENVIRONMENT:
            return f"from {self.origin}"
        base = f"{self.label}" if self.source is KeySource.LABELLED else self.source.value
        if self.command:
            return f"{base} key from command {program_of(self.command)}"
        return f"{base} key {mask_key(self.value)}"


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


class NoSuchLabelError(ByokError):
    """A labelled key was asked for (by `ask --key` or the bot) and the provider has none."""

    kind = ErrorKind.NO_KEY

    def __init__(self, spec: KeySpec, label: str, labels: list[str]) -> None:
        known = ", ".join([DEFAULT_LABEL, *labels])
        super().__init__(
            f"{spec.display_name} has no key labelled {label!r} (it has: {known})",
            remedy=f"Set it with `byok-tui keys set {spec.id} --label {label}`, or choose "
            "another; nothing was sent.",
        )


class NoApiKeyError(ByokError):
    kind = ErrorKind.NO_KEY

    def __init__(self, spec: KeySpec) -> None:
        self.provider_id = spec.id
        places = [f"`byok-tui keys set {spec.id}`", "Settings > API Keys"]
        if spec.env_vars:  # a provider of the user's own reads no environment variable
            places.append(" or ".join(spec.env_vars))
        where = ", ".join(places[:-1]) + f", or {places[-1]}"
        super().__init__(
            f"No API key for {spec.display_name}",
            remedy=f"{REMEDIES[ErrorKind.NO_KEY]} Set one with {where}.",
        )


@dataclass(frozen=True, slots=True)
class BotKeyChoice:
    """What a bot says about its key: its own key, its own command, or a labelled key of its
    provider (at most one is set; the first set wins)."""

    key: str | None = field(default=None, repr=False)
    command: str | None = None
    label: str | None = None


def resolve_key(
    spec: KeySpec,
    store: KeyStore,
    *,
    bot_key: str | None = None,
    bot: BotKeyChoice | None = None,
    label: str | None = None,
    environ: Mapping[str, str] | None = None,
    commands: KeyCommands | None = None,
) -> ResolvedKey:
    """The key for one call to `spec`'s provider and where it came from. `label`: a labelled
    key asked for by name (`default` for the default key); it overrides the bot's choice.

    With `commands`, a key printed by a command is run for (blocking: call it in a thread
    unless `commands.cached` has it); without, such a key comes back with `needs_running`.
    Raises NoApiKeyError (or NoSuchLabelError, KeyCommandError) before anything touches the
    network; KeyStoreError when the store cannot be read and nothing else gives the key.
    """
    choice = bot or BotKeyChoice(key=bot_key)
    environ = os.environ if environ is None else environ
    resolved = _resolve(spec, store, choice, label, environ)
    if resolved is None and spec.key_optional and label is None:
        return ResolvedKey("", KeySource.NONE, "")  # sent with no key at all
    if resolved is None:
        log.debug("no key for %s", spec.id)
        raise NoApiKeyError(spec)
    if resolved.needs_running and commands is not None:
        value = commands.run(resolved.command, f"the {spec.display_name} key")
        resolved = replace(resolved, value=value)
    bad = first_bad_character(resolved.value) if spec.needs_key else None
    if bad is not None:  # got in some other way (an edited file, the environment)
        raise UnusableKeyError(spec, resolved, *bad)
    log.debug("key for %s: %s %s", spec.id, resolved.source_text, resolved.origin)
    return resolved


def _resolve(
    spec: KeySpec,
    store: KeyStore,
    bot: BotKeyChoice,
    label: str | None,
    environ: Mapping[str, str],
) -> ResolvedKey | None:
    if not spec.needs_key and spec.custom:
        # A server of the user's own that takes no key (perhaps a remote gateway): no key,
        # not a "local runtime".
        return ResolvedKey("", KeySource.NONE, TAKES_NO_KEY)
    if not spec.needs_key:
        # A placeholder for the local runtime, which takes no key: its id, never stored or sent.
        return ResolvedKey(spec.id, KeySource.LOCAL_RUNTIME, "")
    if label is not None:
        return _labelled(spec, store, label, read_index(store))
    per_bot = normalize_key(bot.key or "")
    if per_bot:
        remember_secret(per_bot)
        return ResolvedKey(per_bot, KeySource.PER_BOT, "")
    if bot.command:
        return ResolvedKey("", KeySource.PER_BOT, "", command=bot.command)
    if bot.label:
        return _labelled(spec, store, bot.label, read_index(store))
    entry = entry_name(spec.id)
    stored = store.get(entry)
    if stored:
        return ResolvedKey(stored, KeySource.GLOBAL, entry)
    command = read_index(store).command(spec.id)
    if command:
        return ResolvedKey("", KeySource.GLOBAL, entry, command=command)
    return _from_environment(spec, environ)


def _from_environment(spec: KeySpec, environ: Mapping[str, str]) -> ResolvedKey | None:
    for variable in spec.env_vars:
        value = normalize_key(environ.get(variable, ""))
        if value:
            remember_secret(value)
            return ResolvedKey(value, KeySource.ENVIRONMENT, variable)
    return None


def _labelled(spec: KeySpec, store: KeyStore, label: str, index: KeyIndex) -> ResolvedKey:
    if label == DEFAULT_LABEL:
        entry = entry_name(spec.id)
        stored = store.get(entry)
        if stored:
            return ResolvedKey(stored, KeySource.GLOBAL, entry)
        command = index.command(spec.id)
        if command:
            return ResolvedKey("", KeySource.GLOBAL, entry, command=command)
        raise NoSuchLabelError(spec, label, index.labels_of(spec.id))
    if label not in index.labels_of(spec.id):
        raise NoSuchLabelError(spec, label, index.labels_of(spec.id))
    entry = entry_name(spec.id, label)
    command = index.command(spec.id, label)
    if command:
        return ResolvedKey("", KeySource.LABELLED, entry, label=label, command=command)
    stored = store.get(entry)
    if not stored:
        raise NoSuchLabelError(spec, label, index.labels_of(spec.id))
    return ResolvedKey(stored, KeySource.LABELLED, entry, label=label)


def keys_of(spec: KeySpec, store: KeyStore, environ: Mapping[str, str]) -> list[ResolvedKey]:
    """Every key of the provider, in the order failover tries them: the default key (or its
    command, or the environment's when none is stored), then the labelled keys as added.
    Commands are not run."""
    if not spec.needs_key:
        return []
    index = read_index(store)
    found: list[ResolvedKey] = []
    default = _resolve(spec, store, BotKeyChoice(), None, environ)
    if default is not None:
        found.append(default)
    for label in index.labels_of(spec.id):
        try:
            found.append(_labelled(spec, store, label, index))
        except NoSuchLabelError:
            continue  # listed but its entry is gone: nothing to send
    return found


def remember_environment_keys(specs: tuple[KeySpec, ...], environ: Mapping[str, str]) -> None:
    """Register every provider key in the environment with the redaction layer."""
    for spec in specs:
        for variable in spec.env_vars:
            remember_secret(normalize_key(environ.get(variable, "")))
