"""Key resolution: per-bot, then global, then environment, then "No API key"."""

from __future__ import annotations

import os

import pytest

from byok_tui.core.paths import app_paths
from byok_tui.core.records import KeySource
from byok_tui.core.registry import get_provider, key_providers
from byok_tui.keys import NoApiKeyError, entry_name, open_key_store, resolve_key
from byok_tui.keys.file_store import FileKeyStore
from tests.support.keys import ENV_KEY, FAKE_KEYS, PER_BOT_KEY

OPENAI = get_provider("openai")


@pytest.fixture
def store() -> FileKeyStore:
    return FileKeyStore(app_paths().keys_file)


def test_a_per_bot_key_wins_over_global_and_environment(store: FileKeyStore) -> None:
    store.set(entry_name("openai"), FAKE_KEYS["openai"])
    env = {"OPENAI_API_KEY": ENV_KEY}
    resolved = resolve_key(OPENAI, store, bot_key=PER_BOT_KEY, environ=env)
    assert (resolved.value, resolved.source) == (PER_BOT_KEY, KeySource.PER_BOT)


def test_the_global_key_wins_over_the_environment(store: FileKeyStore) -> None:
    store.set(entry_name("openai"), FAKE_KEYS["openai"])
    resolved = resolve_key(OPENAI, store, environ={"OPENAI_API_KEY": ENV_KEY})
    assert (resolved.value, resolved.source) == (FAKE_KEYS["openai"], KeySource.GLOBAL)
    assert resolved.origin == "app-apikey-openai"


def test_the_environment_is_used_when_nothing_is_stored(store: FileKeyStore) -> None:
    resolved = resolve_key(OPENAI, store, environ={"OPENAI_API_KEY": f"  {ENV_KEY}\n"})
    assert (resolved.value, resolved.source) == (ENV_KEY, KeySource.ENVIRONMENT)
    assert resolved.origin == "OPENAI_API_KEY"


def test_gemini_api_key_comes_before_google_api_key(store: FileKeyStore) -> None:
    google = get_provider("google")
    env = {"GEMINI_API_KEY": "gemini-variable-key", "GOOGLE_API_KEY": "google-variable-key"}
    assert resolve_key(google, store, environ=env).origin == "GEMINI_API_KEY"
    del env["GEMINI_API_KEY"]
    assert resolve_key(google, store, environ=env).origin == "GOOGLE_API_KEY"


@pytest.mark.parametrize(
    ("provider_id", "variable"),
    [(p.id, v) for p in key_providers() for v in p.env_vars],
)
def test_every_provider_reads_its_conventional_variable(
    store: FileKeyStore, provider_id: str, variable: str
) -> None:
    resolved = resolve_key(get_provider(provider_id), store, environ={variable: "a-key-12345"})
    assert resolved.origin == variable


def test_a_blank_per_bot_key_falls_back_to_the_global_key(store: FileKeyStore) -> None:
    store.set(entry_name("openai"), FAKE_KEYS["openai"])
    resolved = resolve_key(OPENAI, store, bot_key=" \u200b ", environ={})
    assert resolved.source is KeySource.GLOBAL


def test_clearing_the_per_bot_key_falls_back_to_the_global_key(store: FileKeyStore) -> None:
    store.set(entry_name("openai"), FAKE_KEYS["openai"])
    assert resolve_key(OPENAI, store, bot_key=PER_BOT_KEY, environ={}).value == PER_BOT_KEY
    assert resolve_key(OPENAI, store, bot_key=None, environ={}).value == FAKE_KEYS["openai"]


def test_no_key_anywhere_is_the_no_api_key_error_with_its_remedy(store: FileKeyStore) -> None:
    with pytest.raises(NoApiKeyError) as raised:
        resolve_key(OPENAI, store, environ={})
    error = raised.value
    assert error.message == "No API key for OpenAI"
    assert "correct provider" in error.remedy
    assert "byok-tui keys set openai" in error.remedy
    assert "OPENAI_API_KEY" in error.remedy


def test_the_local_runtime_uses_its_placeholder_and_stores_nothing(store: FileKeyStore) -> None:
    resolved = resolve_key(get_provider("ollama"), store, environ={})
    assert (resolved.value, resolved.source) == ("ollama", KeySource.LOCAL_RUNTIME)
    assert resolved.describe() == "local runtime, no key"
    assert not store.path.exists()


def test_a_resolved_key_never_shows_itself_in_its_repr(store: FileKeyStore) -> None:
    store.set(entry_name("openai"), FAKE_KEYS["openai"])
    resolved = resolve_key(OPENAI, store, environ={})
    assert FAKE_KEYS["openai"] not in repr(resolved)


def test_the_services_never_show_the_environments_keys_in_their_repr() -> None:
    """The environment the services read keys from holds them whole (OPENAI_API_KEY)."""
    from byok_tui.app_services.services import open_services

    services = open_services({**os.environ, "OPENAI_API_KEY": ENV_KEY})
    assert ENV_KEY not in repr(services)
    assert ENV_KEY not in str(services)


def test_describe_names_the_source_with_no_more_than_a_masked_key(store: FileKeyStore) -> None:
    store.set(entry_name("openai"), FAKE_KEYS["openai"])
    key = FAKE_KEYS["openai"]
    assert resolve_key(OPENAI, store, environ={}).describe() == f"global key {key[:4]}…{key[-4:]}"
    per_bot = resolve_key(OPENAI, store, bot_key=PER_BOT_KEY, environ={}).describe()
    assert per_bot == f"per-bot key {PER_BOT_KEY[:4]}…{PER_BOT_KEY[-4:]}"
    store.delete(entry_name("openai"))
    from_env = resolve_key(OPENAI, store, environ={"OPENAI_API_KEY": ENV_KEY}).describe()
    assert from_env == "from OPENAI_API_KEY"


def test_resolution_reads_the_store_on_every_call() -> None:
    store = open_key_store(app_paths())
    store.set(entry_name("openai"), "sk-proj-first-" + "1" * 40)
    assert resolve_key(OPENAI, store, environ={}).value.startswith("sk-proj-first-")
    other_handle = open_key_store(app_paths())
    other_handle.set(entry_name("openai"), "sk-proj-second-" + "2" * 40)
    assert resolve_key(OPENAI, store, environ={}).value.startswith("sk-proj-second-")
