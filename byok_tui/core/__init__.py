"""The leaves every layer may read: paths, errors, redaction and sanitising, the records
(bots, conversations, messages, key states as plain data), the provider registry and its
`providers.toml`, configuration, logs and crash reports, the platform calls (`system`) and
the child processes' environment, key bindings as data, attachments read from disk.

Owns no state and starts nothing. Imports nothing from byok-tui outside `core/` (and the
package's `__version__`): no Textual, no httpx, no key store.
"""
