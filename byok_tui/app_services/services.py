"""The services every front end opens the same way: paths, key store, config, database."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, NamedTuple

from byok_tui.core.config import Config, load_config
from byok_tui.core.errors import ByokError
from byok_tui.core.paths import AppPaths, app_paths
from byok_tui.keys import KeyStore, open_key_store

if TYPE_CHECKING:
    from byok_tui.chat.conversation import ConversationService
    from byok_tui.core.background import SerialWriter
    from byok_tui.core.records import Bot
    from byok_tui.core.registry import Provider
    from byok_tui.providers.client import ProviderClient
    from byok_tui.providers.model_cache import ModelCache
    from byok_tui.storage.db import Progress
    from byok_tui.storage.store import Store
    from byok_tui.tools.held import HeldServers


# A NamedTuple, not a dataclass: its module loads before the first frame (launch.py says why).
class Services(NamedTuple):
    paths: AppPaths
    keys: KeyStore
    config: Config
    environ: Mapping[str, str]

    def __repr__(self) -> str:  # never the environment: it holds keys whole (OPENAI_API_KEY)
        return f"Services(paths={self.paths!r}, keys={self.keys!r}, config={self.config!r})"


def open_services(environ: Mapping[str, str] | None = None) -> Services:
    """Paths, key store and config; the providers the config file defines join the registry
    (ConfigError when a definition is not valid)."""
    env = os.environ if environ is None else environ
    paths = app_paths(env)
    config = load_config(paths.config_file)
    use_config_providers(config)
    return Services(paths, open_key_store(paths, env), config, env)


def use_config_providers(config: Config) -> None:
    """The providers `config` defines are the registry's user-defined ones from now on."""
    from byok_tui.core.registry import use_custom_providers

    if "providers" not in config.data:  # none: their module (~1.6 ms) is not loaded at start
        use_custom_providers(())
        return
    from byok_tui.providers.custom import custom_providers

    use_custom_providers(custom_providers(config))


def reload_config(services: Services) -> Services:
    """`services` with the config file read again (a provider was added or removed)."""
    config = load_config(services.paths.config_file)
    use_config_providers(config)
    return services._replace(config=config)


def open_store(services: Services, progress: Progress | None = None) -> Store:
    """The database in the data folder (created and migrated on first use; a long upgrade
    reports to `progress`)."""
    from byok_tui.storage.store import Store

    return Store(services.paths.data_dir / "byok-tui.sqlite3", progress)


def model_cache(services: Services) -> ModelCache:
    """The models discovered from providers' own lists, kept in the data folder."""
    from byok_tui.providers.model_cache import ModelCache

    return ModelCache(services.paths.data_dir / "models-cache.json")


def first_usable_provider(
    services: Services, candidates: Iterable[Provider], keys: KeyStore | None = None
) -> Provider | None:
    """The first of `candidates` a call could be made to now (a key resolves for it from
    `keys`, by default the key store)."""
    from byok_tui.keys import KeyStoreError, NoApiKeyError, UnusableKeyError, resolve_key

    for provider in candidates:
        try:
            resolve_key(provider, keys or services.keys, environ=services.environ)
        except (NoApiKeyError, UnusableKeyError, KeyStoreError):
            continue
        return provider
    return None


def starting_provider(services: Services, keys: KeyStore | None = None) -> Provider:
    """The provider a new default bot uses: the first with a usable key, else the first with a
    free tier (the fastest way to start: no payment needed)."""
    from byok_tui.core.registry import key_providers

    usable = first_usable_provider(services, key_providers(), keys)
    return usable or next(p for p in key_providers() if any(m.free for m in p.models))


def known_keys(services: Services) -> list[str]:
    """Every stored and environment key, so that an export can scrub copies of them."""
    from byok_tui.core.registry import key_providers
    from byok_tui.keys import normalize_key
    from byok_tui.keys.index import stored_keys

    stored = stored_keys(services.keys, [p.id for p in key_providers()])
    env = [normalize_key(services.environ.get(v, "")) for p in key_providers() for v in p.env_vars]
    return [*stored.values(), *(key for key in env if key)]


def remember_every_key(services: Services, store: Store | None = None) -> None:
    """Register every stored and environment key (and, given the database, every per-bot
    key) with the redaction layer, so that copies of them are found in a prompt, in what a
    tool server says, and in every document that leaves byok-tui."""
    from byok_tui.core.redaction import remember_secret

    for key in known_keys(services):
        remember_secret(key)
    if store is not None:
        for bot in store.bots():
            store.bot_key(bot.id)  # registers it


def keys_kept_for(services: Services, store: Store, provider_id: str) -> list[str]:
    """Every key, key command, label and bot's own key kept for `provider_id`, in words
    (never any of a key): what a provider defined anew under that id must not inherit."""
    from byok_tui.keys.index import kept_for

    bots = [f"{name}'s own key" for name in store.bots_keeping_keys_for(provider_id)]
    return kept_for(services.keys, provider_id) + bots


def forget_keys_of(services: Services, store: Store, provider_id: str) -> list[str]:
    """Forget everything `keys_kept_for` names, before `provider_id` is defined anew: its
    keys were set for an earlier provider's address, and the user sets them again knowingly."""
    from byok_tui.keys.index import forget_provider

    bots = [f"{name}'s own key" for name in store.forget_bot_keys_for(provider_id)]
    return forget_provider(services.keys, provider_id) + bots


def default_bot(services: Services, store: Store, keys: KeyStore | None = None) -> Bot:
    provider = starting_provider(services, keys)
    return store.default_bot(provider.id, provider.default_model)


def follow_first_key(
    services: Services, store: Store, bot: Bot, keys: KeyStore | None = None
) -> Bot:
    """The Default bot, while nothing has been asked of a provider for it (a message sent
    before any key was set is no answer), follows the keys: if its provider has no usable key
    and another provider now has one, it moves there (with that provider's default model).
    Any other bot, or one in use, stays as the user set it."""
    from byok_tui.core.registry import get_provider, key_providers
    from byok_tui.storage.bot_rows import DEFAULT_BOT_NAME

    if bot.name != DEFAULT_BOT_NAME or bot.has_key:
        return bot
    own = get_provider(bot.config.provider)
    if not own.needs_key or first_usable_provider(services, [own], keys) is not None:
        return bot
    found = first_usable_provider(services, key_providers(), keys)
    # Read last: the usual start (a key for the bot's provider) never asks the database.
    if found is None or store.has_answers(bot.id):
        return bot
    config = replace(bot.config, provider=found.id, model=found.default_model)
    return store.update_bot(bot.id, config)


def provider_client(services: Services) -> ProviderClient:
    """The client that calls the providers over HTTP."""
    from byok_tui.providers.client import ProviderClient

    return ProviderClient(services.keys, config=services.config, environ=services.environ)


Backend = Callable[[Services], "ProviderClient"]


@dataclass
class AppContext:
    """Everything the screens reach the outside world through."""

    services: Services
    db: Store  # the SQLite repository; the key store is services.keys
    client: ProviderClient
    conversations: ConversationService
    writer: SerialWriter
    models: ModelCache
    # The MCP servers its messages started, held for the next call; ended with the app.
    tool_servers: HeldServers = field(default_factory=lambda: _held_servers())

    @classmethod
    def open(
        cls, services: Services, backend: Backend | None = None, progress: Progress | None = None
    ) -> AppContext:
        """`backend`: what makes the provider client (tests answer without a socket);
        `progress`: told how far a long upgrade of the database is."""
        from byok_tui.chat.conversation import ConversationService
        from byok_tui.core.background import SerialWriter

        store = open_store(services, progress)
        client = (backend or provider_client)(services)
        models = model_cache(services)
        conversations = ConversationService(store, client, models.context_of)
        return cls(services, store, client, conversations, SerialWriter(), models)


def _held_servers() -> HeldServers:
    from byok_tui.tools.held import HeldServers

    return HeldServers()


def key_of_stored(services: Services) -> Callable[[str], str]:
    """The stored key a server's config names by `{key:PROVIDER}`, and only that one."""
    from byok_tui.core.registry import get_provider
    from byok_tui.keys import entry_name

    def key_of(provider_id: str) -> str:
        get_provider(provider_id)  # an unknown provider: UnknownProviderError, said in a line
        value = services.keys.get(entry_name(provider_id))
        if not value:
            raise ByokError(
                f"the MCP server's config names the key of {provider_id}, and none is stored",
                remedy=f"Set it with `byok-tui keys set {provider_id}`, or remove the reference.",
            )
        return str(value)

    return key_of
