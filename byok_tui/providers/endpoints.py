"""Where each provider is reached: the registry's base URL, or a local override.

Overrides come only from this machine: `BYOK_TUI_<ID>_BASE_URL`, then `[providers.<id>]
base_url` in the config file (for a user-defined provider, its definition), then (for Ollama)
`OLLAMA_HOST`. Never from a shared or
imported bot. Plain http is refused for a provider that takes a key unless the host is a
loopback address, so a key never crosses a network in clear text.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from urllib.parse import urlsplit

from byok_tui.core.config import Config, ConfigError
from byok_tui.core.registry import Provider

OLLAMA_DEFAULT_PORT = 11434


def override_variable(provider: Provider) -> str:
    return f"BYOK_TUI_{provider.id.upper().replace('-', '_')}_BASE_URL"


def is_loopback_host(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_ollama_host(value: str) -> str:
    """OLLAMA_HOST as the official client reads it: scheme, host and port all optional."""
    value = value.strip()
    scheme = "http"
    if "://" in value:
        scheme, value = value.split("://", 1)
    value = value.rstrip("/")
    host, path = [*value.split("/", 1), ""][:2]
    if host.startswith(":"):
        host = "127.0.0.1" + host
    has_port = "]:" in host if host.startswith("[") else ":" in host
    if not has_port:
        host = f"{host or '127.0.0.1'}:{OLLAMA_DEFAULT_PORT}"
    if host.startswith("0.0.0.0:"):  # a server bound to all interfaces
        host = "127.0.0.1:" + host.split(":", 1)[1]
    return f"{scheme}://{host}" + (f"/{path}" if path else "")


def base_url(provider: Provider, environ: Mapping[str, str], config: Config) -> str:
    variable = override_variable(provider)
    url = environ.get(variable, "").strip()
    origin = variable
    if not url and not provider.custom:  # a user-defined provider's is its definition's
        url = (config.provider_setting(provider.id, "base_url") or "").strip()
        origin = f"providers.{provider.id}.base_url in {config.path}"
    if not url and provider.family == "ollama-chat" and environ.get("OLLAMA_HOST", "").strip():
        url = parse_ollama_host(environ["OLLAMA_HOST"])
        origin = "OLLAMA_HOST"
    if not url and provider.custom:
        url, origin = provider.base_url, f"providers.{provider.id}.base_url in {config.path}"
    if not url:
        return provider.base_url.rstrip("/")
    return check_base_url(provider, url, origin)


def check_base_url(provider: Provider, url: str, origin: str) -> str:
    """`url`, checked as a base URL for `provider` (ConfigError naming `origin` when it cannot
    be one), without a trailing slash."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{origin}: {url!r} is not an http(s) address")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ConfigError(f"{origin}: a base URL may not carry credentials, a query or a fragment")
    if parts.scheme == "http" and provider.needs_key and not is_loopback_host(parts.hostname):
        raise ConfigError(
            f"{origin}: plain http to {parts.hostname} would send your {provider.display_name} "
            "key unencrypted; use https, or a loopback address",
        )
    return url.rstrip("/")


def destination(provider: Provider, url: str) -> str | None:
    """Where a request to `url` goes, when that is worth saying beside the key that goes
    with it: the host (and port) of a user-defined provider, or of a built-in provider's
    overridden base URL; None for a built-in provider's own host."""
    parts = urlsplit(url)
    if not provider.custom and parts.hostname == urlsplit(provider.base_url).hostname:
        return None
    return parts.netloc or None
