"""The services every front end opens the same way: paths, key store, config, database."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from byok_tui.config import Config, load_config
from byok_tui.keys import KeyStore, open_key_store
from byok_tui.paths import AppPaths, app_paths

if TYPE_CHECKING:
    from byok_tui.background import SerialWriter
    from byok_tui.conversation import ConversationService
    from byok_tui.providers.client import ProviderClient
    from byok_tui.providers.registry import Provider
    from byok_tui.storage.store import Bot, Store


@dataclass(frozen=True, slots=True)
class Services:
    paths: AppPaths
    store: KeyStore
    config: Config
    environ: Mapping[str, str]


def open_services(environ: Mapping[str, str] | None = None) -> Services:
    env = os.environ if environ is None else environ
    paths = app_paths(env)
    return Services(paths, open_key_store(paths, env), load_config(paths.config_file), env)


def open_store(services: Services) -> Store:
    """The database in the data folder (created and migrated on first use)."""
    from byok_tui.storage.store import Store

    return Store(services.paths.data_dir / "byok-tui.sqlite3")


def starting_provider(services: Services) -> Provider:
    """The provider a new default bot uses: the first with a usable key, else the first with a
    free tier (the seed's fastest way to start)."""
    from byok_tui.keys import KeyStoreError, NoApiKeyError, resolve_key
    from byok_tui.providers.registry import key_providers

    for provider in key_providers():
        try:
            resolve_key(provider, services.store, environ=services.environ)
        except (NoApiKeyError, KeyStoreError):
            continue
        return provider
    return next(p for p in key_providers() if any(m.free for m in p.models))


def default_bot(services: Services, store: Store) -> Bot:
    provider = starting_provider(services)
    return store.default_bot(provider.id, provider.default_model)


@dataclass
class AppContext:
    """Everything the screens reach the outside world through."""

    services: Services
    store: Store
    client: ProviderClient
    conversations: ConversationService
    writer: SerialWriter

    @classmethod
    def open(cls, services: Services) -> AppContext:
        from byok_tui.background import SerialWriter
        from byok_tui.conversation import ConversationService
        from byok_tui.providers.client import ProviderClient

        store = open_store(services)
        client = ProviderClient(services.store, config=services.config, environ=services.environ)
        return cls(services, store, client, ConversationService(store, client), SerialWriter())
