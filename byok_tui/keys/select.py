"""Choosing the key store backend.

`BYOK_TUI_KEYSTORE=keyring|file` forces one. The default, `auto`, keeps using the key file
once one exists (so keys never vanish when a keyring appears later), else uses a native OS
keyring when there is one, else the key file, silently: a headless box with no keyring daemon
is a normal place to run byok-tui.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from byok_tui.core.paths import AppPaths
from byok_tui.keys.base import KeyStore, KeyStoreError

KEYSTORE_ENV = "BYOK_TUI_KEYSTORE"
_CHOICES = ("auto", "keyring", "file")


def _choice(environ: Mapping[str, str]) -> str:
    choice = environ.get(KEYSTORE_ENV, "").strip().lower() or "auto"
    if choice not in _CHOICES:
        raise KeyStoreError(
            f"{KEYSTORE_ENV}={choice!r} is not one of {', '.join(_CHOICES)}",
            remedy=f"Set {KEYSTORE_ENV} to keyring or file, or unset it for automatic choice.",
        )
    return choice


def key_file_chosen(paths: AppPaths, environ: Mapping[str, str]) -> bool:
    """Whether `open_key_store` will open the key file without loading the keyring (which
    takes a tenth of a second or more): the app reads the keys before its first frame then."""
    choice = _choice(environ)
    return choice == "file" or (choice == "auto" and paths.keys_file.exists())


def open_key_store(paths: AppPaths, environ: Mapping[str, str] | None = None) -> KeyStore:
    env = os.environ if environ is None else environ
    from byok_tui.keys.file_store import FileKeyStore

    if key_file_chosen(paths, env):
        return FileKeyStore(paths.keys_file)
    from byok_tui.keys import keyring_store

    if _choice(env) == "keyring":
        try:
            backend = keyring_store.usable_backend()
        except Exception as error:
            raise KeyStoreError(
                f"{KEYSTORE_ENV}=keyring, but keyring failed to load: {type(error).__name__}"
            ) from None
        if backend is None:
            raise KeyStoreError(
                f"{KEYSTORE_ENV}=keyring, but no keyring backend is available on this machine",
                remedy=f"Unset {KEYSTORE_ENV} to use the key file, or start a keyring service.",
            )
        return keyring_store.KeyringKeyStore(backend)

    native = keyring_store.native_backend()  # auto, and there is no key file yet
    if native is not None:
        return keyring_store.KeyringKeyStore(native)
    return FileKeyStore(paths.keys_file)
