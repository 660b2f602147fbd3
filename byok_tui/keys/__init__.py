"""The key store: provider keys under entry names (`app-apikey-<id>`).

Knows nothing of providers: it stores strings under entry names (`app-apikey-<id>`); which
ids exist is the registry's business. Imports nothing but `core/`. Never logs a key, and
never puts one in an error.
"""

from byok_tui.core.key_records import KeySource  # where a key came from: plain data
from byok_tui.keys.base import (
    KeyFileCorruptError,
    KeyStore,
    KeyStoreError,
    entry_name,
    mask_key,
    normalize_key,
)
from byok_tui.keys.resolve import (
    KeySpec,
    NoApiKeyError,
    ResolvedKey,
    UnusableKeyError,
    resolve_key,
)
from byok_tui.keys.select import KEYSTORE_ENV, key_file_chosen, open_key_store

__all__ = [
    "KEYSTORE_ENV",
    "KeyFileCorruptError",
    "KeySource",
    "KeySpec",
    "KeyStore",
    "KeyStoreError",
    "NoApiKeyError",
    "ResolvedKey",
    "UnusableKeyError",
    "entry_name",
    "key_file_chosen",
    "mask_key",
    "normalize_key",
    "open_key_store",
    "resolve_key",
]
