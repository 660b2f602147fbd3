"""Choosing the key store backend.

`BYOK_TUI_KEYSTORE=keyring|file` forces one. The default, `auto`, keeps using the key file
once one exists (so keys never vanish when a keyring appears later), else uses a native OS
keyring when there is one, else the key file, silently: a headless box with no keyring daemon
is a normal place to run byok-tui.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from byok_tui.keys.base import KeyStore, KeyStoreError
from byok_tui.paths import AppPaths

KEYSTORE_ENV = "BYOK_TUI_KEYSTORE"
_CHOICES = ("auto", "keyring", "file")


def open_key_store(paths: AppPaths, environ: Mapping[str, str] | None = None) -> KeyStore:
    env = os.environ if environ is None else environ
    choice = env.get(KEYSTORE_ENV, "").strip().lower() or "auto"
    if choice not in _CHOICES:
        raise KeyStoreError(
            f"{KEYSTORE_ENV}={choice!r} is not one of {', '.join(_CHOICES)}",
            remedy=f"Set {KEYSTORE_ENV} to keyring or file, or unset it for automatic choice.",
        )
    from byok_tui.keys.file_store import FileKeyStore

    if choice == "file":
        return FileKeyStore(paths.keys_file)

    from byok_tui.keys import keyring_store

    if choice == "keyring":
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

    if paths.keys_file.exists():
        return FileKeyStore(paths.keys_file)
    native = keyring_store.native_backend()
    if native is not None:
        return keyring_store.KeyringKeyStore(native)
    return FileKeyStore(paths.keys_file)
