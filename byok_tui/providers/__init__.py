"""Talking to providers: the wire formats (protocol families) and the HTTP client. What a
provider is (ids, endpoints, key formats, models, ranges) is data in byok_tui/registry.py.

This package never imports Textual, and importing it loads no HTTP client: adapters import
httpx when they are first used, so the first frame of the app does not pay for it.
"""
