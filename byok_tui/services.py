"""The services every front end opens the same way: paths, key store and config."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from byok_tui.config import Config, load_config
from byok_tui.keys import KeyStore, open_key_store
from byok_tui.paths import AppPaths, app_paths


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
