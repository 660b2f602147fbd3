"""The OS keyring store, through the `keyring` package.

Service name `byok-tui`, user name = the entry name. Only keyring's own native backends count
as "a real keyring": keyrings.alt and keyrings.cryptfile prompt for a master password, which
would hang a full-screen app, so automatic selection never picks them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from byok_tui.keys.base import KeyStore, KeyStoreError

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

SERVICE_NAME = "byok-tui"

_UNUSABLE = {"keyring.backends.fail", "keyring.backends.null"}


def _is_native(backend: KeyringBackend) -> bool:
    from keyring.backends.chainer import ChainerBackend

    if isinstance(backend, ChainerBackend):
        return any(_is_native(b) for b in backend.backends)
    module = type(backend).__module__
    return module.startswith("keyring.backends.") and module not in _UNUSABLE


def current_backend() -> KeyringBackend:
    import keyring

    return keyring.get_keyring()


def native_backend() -> KeyringBackend | None:
    """The keyring backend when it is one of keyring's own native ones, else None."""
    try:
        backend = current_backend()
    except Exception:
        return None
    return backend if _is_native(backend) else None


def usable_backend() -> KeyringBackend | None:
    """Whatever backend keyring chose (a configured third-party one too), unless it is `fail`."""
    backend = current_backend()
    return None if type(backend).__module__ in _UNUSABLE else backend


class KeyringKeyStore(KeyStore):
    def __init__(self, backend: KeyringBackend) -> None:
        super().__init__()
        self._backend = backend

    @property
    def location(self) -> str:
        name = type(self._backend).__name__
        module = type(self._backend).__module__
        return f"keyring service {SERVICE_NAME!r} ({module}.{name})"

    def _fail(self, action: str, error: Exception) -> KeyStoreError:
        # keyring's messages describe the backend, not the secret; redacted all the same.
        return KeyStoreError(f"the keyring could not {action}: {type(error).__name__}: {error}")

    def _read(self, entry: str) -> str | None:
        try:
            return self._backend.get_password(SERVICE_NAME, entry)
        except Exception as error:
            raise self._fail(f"read {entry}", error) from None

    def _write(self, entry: str, value: str) -> None:
        try:
            self._backend.set_password(SERVICE_NAME, entry, value)
        except Exception as error:
            raise self._fail(f"save {entry}", error) from None

    def _remove(self, entry: str) -> bool:
        from keyring.errors import PasswordDeleteError

        try:
            if self._backend.get_password(SERVICE_NAME, entry) is None:
                return False
            self._backend.delete_password(SERVICE_NAME, entry)
        except PasswordDeleteError:
            return False
        except Exception as error:
            raise self._fail(f"remove {entry}", error) from None
        return True
