"""Talking to providers: the wire formats (protocol families, `wire/`), the HTTP client, a
key's limits and balance as providers state them, custom providers the user defines
(`custom`) and fallbacks (`fallbacks`). What a provider is (ids, endpoints, key formats,
models, ranges) is data in byok_tui/core/registry.py.

May import `core/` and `keys/` (the client reads the key it sends); never `storage/`, the
domain packages or Textual. Importing it loads no HTTP client: adapters import httpx when
they are first used, so the first frame of the app does not pay for it.
"""
