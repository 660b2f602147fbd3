"""Choosing and using the OS keyring backend; the file store whenever there is none."""

from __future__ import annotations

import keyring
import pytest
from keyring.backends import fail

from byok_tui.core.paths import app_paths
from byok_tui.keys import KeyStoreError, entry_name, open_key_store
from byok_tui.keys.file_store import FileKeyStore
from byok_tui.keys.keyring_store import SERVICE_NAME, KeyringKeyStore, native_backend
from tests.support.isolated_keyring import IsolatedKeyring
from tests.support.keys import FAKE_KEYS


def test_forced_keyring_stores_under_service_byok_tui_and_the_entry_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BYOK_TUI_KEYSTORE", "keyring")
    store = open_key_store(app_paths())
    assert isinstance(store, KeyringKeyStore)
    store.set(entry_name("groq"), f"\t{FAKE_KEYS['groq']}\n")
    backend = keyring.get_keyring()
    assert backend.get_password(SERVICE_NAME, "app-apikey-groq") == FAKE_KEYS["groq"]
    assert store.get(entry_name("groq")) == FAKE_KEYS["groq"]
    assert store.delete(entry_name("groq")) is True
    assert store.delete(entry_name("groq")) is False
    assert store.get(entry_name("groq")) is None


def test_automatic_choice_on_a_headless_box_is_the_file_store_without_error() -> None:
    keyring.set_keyring(fail.Keyring())
    assert native_backend() is None
    store = open_key_store(app_paths(), {})
    assert isinstance(store, FileKeyStore)


def test_automatic_choice_never_counts_a_third_party_backend_as_a_keyring() -> None:
    keyring.set_keyring(IsolatedKeyring())  # stands in for keyrings.alt and friends
    assert native_backend() is None
    assert isinstance(open_key_store(app_paths(), {}), FileKeyStore)


def test_forced_keyring_with_no_keyring_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    keyring.set_keyring(fail.Keyring())
    with pytest.raises(KeyStoreError, match="no keyring backend is available"):
        open_key_store(app_paths(), {"BYOK_TUI_KEYSTORE": "keyring"})


def test_an_unknown_keystore_choice_is_a_clear_error() -> None:
    with pytest.raises(KeyStoreError, match="not one of auto, keyring, file"):
        open_key_store(app_paths(), {"BYOK_TUI_KEYSTORE": "vault"})


def test_a_keyring_that_raises_gives_a_key_store_error_without_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = open_key_store(app_paths(), {"BYOK_TUI_KEYSTORE": "keyring"})
    monkeypatch.setenv("BYOK_TEST_KEYRING_FAIL", "1")
    with pytest.raises(KeyStoreError) as raised:
        store.set(entry_name("openai"), FAKE_KEYS["openai"])
    assert "keyring could not save app-apikey-openai" in str(raised.value)
    assert FAKE_KEYS["openai"] not in str(raised.value)
    with pytest.raises(KeyStoreError, match="could not read"):
        store.get(entry_name("openai"))


def test_an_existing_key_file_keeps_being_used_in_automatic_mode() -> None:
    file_store = FileKeyStore(app_paths().keys_file)
    file_store.set(entry_name("openai"), FAKE_KEYS["openai"])
    store = open_key_store(app_paths(), {})
    assert isinstance(store, FileKeyStore)
    assert store.get(entry_name("openai")) == FAKE_KEYS["openai"]


class PretendSecretService(IsolatedKeyring):
    """Reports itself the way keyring's own Secret Service backend does."""


PretendSecretService.__module__ = "keyring.backends.SecretService"


def test_automatic_choice_uses_a_native_keyring_when_there_is_one() -> None:
    keyring.set_keyring(PretendSecretService())
    store = open_key_store(app_paths(), {})
    assert isinstance(store, KeyringKeyStore)
    store.set(entry_name("xai"), FAKE_KEYS["xai"])
    assert not app_paths().keys_file.exists()
