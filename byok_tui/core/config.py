"""The config file, `config.toml` in the config folder, read with tomllib.

Only local settings live here (for example `[providers.openai] base_url = "…"`) and the
providers the user defined (custom_providers.py); it never holds keys. Nothing imported from a
shared bot writes to it; an export adds only definitions of providers not defined here, under
ids with no stored key (so no stored key is ever pointed at an address from a file), and never
a built-in provider's base URL.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from byok_tui.core.errors import ByokError, ErrorKind


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

    def _keys_number(self, name: str, default: float) -> float:
        section = self.data.get("keys", {})
        value = section.get(name, default) if isinstance(section, dict) else default
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ConfigError(f"{self.path}: keys.{name} must be a number, 0 or more")
        return float(value)

    def key_command_cache_seconds(self) -> float:
        """How long a key printed by a command is held in memory (`[keys]
        command_cache_minutes`, default 10; 0: the command runs for every request)."""
        return self._keys_number("command_cache_minutes", 10) * 60

    def key_reminder_days(self) -> float:
        """After how many days `keys list` and Settings suggest rotating a key (`[keys]
        remind_after_days`; 0, the default: never)."""
        return self._keys_number("remind_after_days", 0)


LARGEST_CONFIG = 4 * 1024 * 1024  # a hand-written file; 100 providers of 500 models fit


def load_config(path: Path) -> Config:
    from byok_tui.core.paths import read_bounded

    try:
        raw = read_bounded(path, LARGEST_CONFIG)  # not a FIFO or an endless stream
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


def read_document(path: Path) -> Any:
    """The config file as a tomlkit document (its comments and order kept); an empty one
    when there is no file yet."""
    import tomlkit

    try:
        return tomlkit.parse(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return tomlkit.document()
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read the config file {path}: {error}") from None
    except tomlkit.exceptions.ParseError as error:
        raise ConfigError(f"the config file {path} is not valid TOML: {error}") from None


def write_document(path: Path, document: Any) -> None:
    """Write the document in place of the config file, private and whole (paths.write_private:
    a temp file beside it renamed over it; a symlink or a non-regular file is refused)."""
    import tomlkit

    from byok_tui.core.paths import make_private_dirs, write_private

    try:
        make_private_dirs(path.parent)
        write_private(path, tomlkit.dumps(document).encode("utf-8"))
    except OSError as error:
        raise ConfigError(f"cannot write the config file {path}: {error.strerror}") from None


def add_table(
    path: Path, section: tuple[str, ...], name: str, table: dict[str, Any], taken: str
) -> None:
    """Add `[<section>.<name>]` to the config file (comments and order kept); ConfigError
    `taken` when it is there already."""
    import tomlkit

    document = read_document(path)
    parent = document
    for part in section:
        if parent.get(part) is None:
            parent[part] = tomlkit.table(is_super_table=True)
        parent = parent[part]
    if name in parent:
        raise ConfigError(taken)
    written = tomlkit.table()
    for field_name, value in table.items():
        written[field_name] = value
    parent[name] = written
    write_document(path, document)
