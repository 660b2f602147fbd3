"""Fault tests use the provider tests' loopback server and key store fixtures."""

from tests.providers.conftest import server, store

__all__ = ["server", "store"]
