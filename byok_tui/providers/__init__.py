"""Provider registry and (later) protocol adapters.

This package never imports Textual, and importing it loads no HTTP client: adapters import
httpx when they are first used, so the first frame of the app does not pay for it.
"""
