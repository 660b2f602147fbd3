"""The config file, `config.toml` in the config folder, read with tomllib.

Only local settings live here (for example `[providers.openai] base_url = "…"`); it never
holds keys, and nothing imported from a shared bot or an export ever writes to it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from byok_tui.errors import ByokError, ErrorKind


class ConfigError(ByokError):
    kind = ErrorKind.CONFIG


@dataclass(frozen=True, slots=True)
class Config:
    path: Path | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def provider_setting(self, provider_id: str, name: str) -> str | None:
        section = self.data.get("providers", {}).get(provider_id, {})
        value = section.get(name) if isinstance(section, dict) else None
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{self.path}: providers.{provider_id}.{name} must be a string")
        return value


def load_config(path: Path) -> Config:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Config(path)
    except OSError as error:
        raise ConfigError(f"cannot read the config file {path}: {error.strerror}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"the config file {path} is not valid TOML: {error}") from None
    providers = data.get("providers", {})
    if not isinstance(providers, dict):
        raise ConfigError(f"{path}: [providers] must be a table")
    return Config(path, data)
