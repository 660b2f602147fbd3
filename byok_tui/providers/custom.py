"""Providers the user defines: any OpenAI-compatible endpoint (LM Studio, vLLM, llama.cpp's
server, LiteLLM, Together, Fireworks...), as a `[providers.<id>]` table in the config file with
`kind = "openai-compatible"`.

A definition never holds a key: the provider's key is kept in the key store under
`app-apikey-<id>` like any other, and only ever goes to the definition's own base URL (key
resolution is by provider id, and a user-defined provider reads no environment variable). The
base URL must be https unless it is a loopback address, or the provider takes no key.
Definitions are written with tomlkit, so the user's comments and order in the file are kept,
and the file is replaced whole (a crash leaves the old file or the new one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from byok_tui.core.config import Config, ConfigError, add_table, read_document, write_document
from byok_tui.core.errors import ByokError
from byok_tui.core.redaction import model_id_problem
from byok_tui.core.registry import (
    KEY_USES,
    KeyUse,
    Provider,
    builtin_providers,
    custom_provider,
    providers,
    use_custom_providers,
)
from byok_tui.core.sanitize import clean_line, has_terminal_controls

T = TypeVar("T")

KIND = "openai-compatible"
MAX_MODELS = 500  # more than any server lists; a bound on what a definition can make us hold
MAX_DEFINITIONS = 100  # in one export


@dataclass(frozen=True, slots=True)
class CustomDefinition:
    """One user-defined provider, as the config file states it."""

    id: str
    base_url: str
    name: str = ""
    models: tuple[tuple[str, str], ...] = ()  # (model id, name shown)
    key: KeyUse = "required"
    default_model: str = ""

    def provider(self) -> Provider:
        return custom_provider(
            self.id,
            name=self.name,
            base_url=self.base_url,
            models=self.models,
            key=self.key,
            default_model=self.default_model,
        )

    def table(self) -> dict[str, Any]:
        """The definition as the config file holds it (and exports carry it)."""
        table: dict[str, Any] = {"kind": KIND, "name": self.name or self.id}
        table["base_url"] = self.base_url
        if self.models:
            table["models"] = [
                model_id if shown == model_id else {"id": model_id, "name": shown}
                for model_id, shown in self.models
            ]
        if self.default_model:
            table["default_model"] = self.default_model
        table["key"] = self.key
        return table


def _text(table: dict[str, Any], name: str, where: str, *, required: bool = False) -> str:
    value = table.get(name, "")
    if not isinstance(value, str) or (required and not value.strip()) or len(value) > 2000:
        raise ConfigError(f"{where}.{name} must be {'a non-empty' if required else 'a'} string")
    return clean_line(value)  # shown on screen: no terminal controls, one line


def _model_id(model: str, where: str) -> str:
    problem = model_id_problem(model)
    if problem is not None:
        raise ConfigError(f"{where}: {problem}")
    return model


def _models(value: object, where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list) or len(value) > MAX_MODELS:
        raise ConfigError(f"{where}.models must be a list of at most {MAX_MODELS} models")
    found: list[tuple[str, str]] = []
    for item in value:
        if isinstance(item, str) and clean_line(item):
            found.append((_model_id(clean_line(item), where), clean_line(item)))
        elif isinstance(item, dict) and isinstance(item.get("id"), str) and clean_line(item["id"]):
            model_id = _model_id(clean_line(item["id"]), where)
            found.append((model_id, clean_line(str(item.get("name", ""))) or model_id))
        else:
            raise ConfigError(f"{where}.models: each model is an id, or a table with an id")
    return tuple(found)


def parse_definition(provider_id: str, table: object, origin: str) -> CustomDefinition:
    """A definition read from a config file or an export (`origin` says which, in errors),
    checked: its id, kind, base URL, models and key setting. Raises ConfigError."""
    from byok_tui.providers.endpoints import check_base_url

    where = f"{origin}: providers.{provider_id}"
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    if table.get("kind") != KIND:
        raise ConfigError(f'{where}.kind must be "{KIND}"')
    key = table.get("key", "required")
    if key not in KEY_USES:
        raise ConfigError(f"{where}.key must be one of {', '.join(KEY_USES)}")
    definition = CustomDefinition(
        id=provider_id,
        base_url=_text(table, "base_url", where, required=True),
        name=_text(table, "name", where),
        models=_models(table.get("models", []), where),
        key=key,
        default_model=_model_id(_text(table, "default_model", where), where),
    )
    if has_terminal_controls(str(table["base_url"])):
        raise ConfigError(f"{where}.base_url holds control characters")
    try:
        provider = definition.provider()
    except ValueError as error:
        raise ConfigError(f"{where}: {error}") from None
    check_base_url(provider, definition.base_url, f"{where}.base_url")
    return definition


def definitions(config: Config) -> tuple[CustomDefinition, ...]:
    """Every provider the config file defines, in its order. A table for an id that is neither
    built in nor defined (no `kind`) is an error, not silently ignored: it is a typo."""
    builtin = {p.id for p in builtin_providers()}
    origin = str(config.path or "config")
    found: list[CustomDefinition] = []
    for provider_id, table in config.data.get("providers", {}).items():
        if provider_id in builtin:
            if isinstance(table, dict) and "kind" in table:
                raise ConfigError(
                    f"{origin}: providers.{provider_id} is a built-in provider; give your own "
                    "provider another id"
                )
            continue  # a local setting of a built-in provider (its base URL)
        if not isinstance(table, dict) or "kind" not in table:
            raise ConfigError(
                f"{origin}: providers.{provider_id} is not a built-in provider; to define "
                f'one, give it kind = "{KIND}" and a base_url'
            )
        found.append(parse_definition(provider_id, table, origin))
    return tuple(found)


def custom_providers(config: Config) -> tuple[Provider, ...]:
    return tuple(d.provider() for d in definitions(config))


def add_definition(path: Path, definition: CustomDefinition) -> None:
    """Write `definition` into the config file. Raises ConfigError when the id is taken (a
    built-in provider or another definition) or the definition is not valid."""

    parse_definition(definition.id, definition.table(), str(path))
    taken = (
        f"{path}: providers.{definition.id} exists already; remove it first "
        f"(`byok-tui provider rm {definition.id}`)"
    )
    add_table(path, ("providers",), definition.id, definition.table(), taken)


def remove_definition(path: Path, provider_id: str) -> None:
    """Take `provider_id`'s definition out of the config file. Raises ConfigError when there
    is none (a built-in provider cannot be removed)."""
    document = read_document(path)
    section = document.get("providers")
    table = section.get(provider_id) if section is not None else None
    if table is None or "kind" not in table:
        raise ConfigError(f"{path} defines no provider {provider_id!r}")
    del section[provider_id]
    write_document(path, document)


def definitions_of(config: Config, provider_ids: Sequence[str]) -> list[CustomDefinition]:
    """The definitions of those of `provider_ids` that are user-defined (for an export)."""
    wanted = set(provider_ids)
    return [d for d in definitions(config) if d.id in wanted]


def provider_tables(config: Config) -> dict[str, dict[str, Any]]:
    """Every definition, as an export carries them (no key is ever part of one)."""
    return {d.id: d.table() for d in definitions(config)}


@dataclass(frozen=True, slots=True)
class Adopted:
    """What an import did with the providers an export defines."""

    added: tuple[CustomDefinition, ...]  # defined here now
    kept: tuple[str, ...]  # defined here already, differently: the local definition stays
    # Not defined here, but keys are kept under its id (a provider removed earlier: a stored
    # key, a key command, a label, a bot's own key; in words): not added, since those keys
    # would go to the address the file names.
    refused: tuple[tuple[CustomDefinition, tuple[str, ...]], ...] = ()


def _exported(raw: bytes, config: Config, keys_kept: Callable[[str], Sequence[str]]) -> Adopted:
    import json

    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return Adopted((), ())  # the import itself says what is wrong with the file
    tables = document.get("providers", {}) if isinstance(document, dict) else {}
    if not isinstance(tables, dict) or len(tables) > MAX_DEFINITIONS:
        what = f"{len(tables):,} providers" if isinstance(tables, dict) else "no table"
        raise ByokError(
            f"the export's providers are {what}: an export holds a table of at most "
            f"{MAX_DEFINITIONS} providers by id",
            remedy="The file was edited, or is not a byok-tui export; nothing was imported.",
        )
    local = {d.id: d for d in definitions(config)}
    added, kept, refused = [], [], []
    for provider_id, table in tables.items():
        definition = parse_definition(str(provider_id), table, "the export")
        if provider_id in local:
            if local[provider_id] != definition:
                kept.append(definition.id)
        elif held := tuple(keys_kept(definition.id)):
            refused.append((definition, held))
        else:
            added.append(definition)
    return Adopted(tuple(added), tuple(kept), tuple(refused))


def import_with_definitions(
    path: Path,
    config: Config,
    raw: bytes,
    run_import: Callable[[], T],
    keys_kept: Callable[[str], Sequence[str]],
) -> tuple[T, Adopted]:
    """Run `run_import` (the import of the export `raw`) with the providers the export defines
    and this machine does not, known to the registry, and write them to the config file only
    once it succeeded: a failed import changes nothing. A provider defined here already
    keeps its local definition. No key comes with a definition, and one whose id has any key
    kept here (`keys_kept`: a stored key, a key command, a label, a bot's own key) is not added: no
    key is ever sent to an address a file names."""
    from byok_tui.core.config import load_config

    adopted = _exported(raw, config, keys_kept)
    mine = tuple(p for p in providers() if p.custom)
    use_custom_providers(mine + tuple(d.provider() for d in adopted.added))
    try:
        result = run_import()
        for definition in adopted.added:
            add_definition(path, definition)
    finally:
        use_custom_providers(custom_providers(load_config(path)))  # what the file now says
    return result, adopted
