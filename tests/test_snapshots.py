"""How the screens look. Each snapshot is paired with Pilot assertions in test_app.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from byok_tui.app import ByokApp
from byok_tui.keys import KeyFileCorruptError, KeySource
from byok_tui.keys.overview import KeyOverview, KeyStatus
from byok_tui.providers.registry import providers

KEYS_FILE = Path("/home/user/.local/share/byok-tui/keys/keys.json")
STATES: dict[str, tuple[KeySource | None, str, str]] = {
    "anthropic": (KeySource.GLOBAL, "app-apikey-anthropic", "sk-a…AbCd"),
    "openai": (KeySource.ENVIRONMENT, "OPENAI_API_KEY", "sk-p…9xQz"),
    "google": (KeySource.GLOBAL, "app-apikey-google", "AIza…t33n"),
    "ollama": (KeySource.LOCAL_RUNTIME, "", ""),
}


def fixed_overview(error: KeyFileCorruptError | None = None) -> KeyOverview:
    statuses = []
    for provider in providers():
        source, origin, masked = STATES.get(provider.id, (None, "", ""))
        statuses.append(
            KeyStatus(
                provider_id=provider.id,
                display_name=provider.display_name,
                entry=f"app-apikey-{provider.id}" if provider.needs_key else None,
                stored=source is KeySource.GLOBAL,
                source=source,
                origin=origin,
                masked=masked,
            )
        )
    return KeyOverview(tuple(statuses), f"file {KEYS_FILE}", error, ())


def app_with(overview: KeyOverview) -> ByokApp:
    return ByokApp(overview=overview, load_overview=lambda: overview, crash_dir=Path("/nowhere"))


def test_providers_screen_with_some_keys_set(snap_compare: Any) -> None:
    """Every provider in registry order; set keys masked (first and last four characters),
    the environment key named by its variable, ollama as a local runtime; footer bindings."""
    assert snap_compare(app_with(fixed_overview()), terminal_size=(100, 20))


def test_providers_screen_when_the_key_file_is_corrupt(snap_compare: Any) -> None:
    """The banner turns into an error naming the key file; environment keys still show."""
    error = KeyFileCorruptError(KEYS_FILE, "it is not valid JSON")
    assert snap_compare(app_with(fixed_overview(error)), terminal_size=(100, 20))
