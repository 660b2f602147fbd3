"""Keys are never logged: a debug log of real work, with keys of every kind set, holds none."""

from __future__ import annotations

import logging
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from byok_tui.app import build_app
from byok_tui.core.logs import configure_logging
from byok_tui.core.paths import app_paths
from byok_tui.core.registry import get_provider
from byok_tui.keys import entry_name, open_key_store, resolve_key
from tests.support.cli import run_cli
from tests.support.keys import ENV_KEY, FAKE_KEYS, PER_BOT_KEY
from tests.support.loopback import json_server
from tests.support.pilot import settle

ALL_SECRETS = (*FAKE_KEYS.values(), PER_BOT_KEY, ENV_KEY)
# Not shaped like any provider's key: only the remembered-secret layer can catch these.
ODD_GLOBAL = "my-odd-global-key-2f9"
ODD_ENV = "my-odd-env-key-77ab1"


@pytest.fixture
def root_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        handler.close()
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


def assert_no_secret(text: str, secrets: tuple[str, ...]) -> None:
    for secret in secrets:
        assert secret not in text, f"a key leaked into the log: {secret[:6]}…"


async def test_a_debug_log_of_real_work_holds_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, root_logging: None
) -> None:
    log_file = tmp_path / "debug.log"
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.setenv("MISTRAL_API_KEY", ODD_ENV)
    configure_logging(log_file, stderr_warnings=False)
    store = open_key_store(app_paths())
    for provider_id, key in FAKE_KEYS.items():
        if provider_id not in ("openai", "mistral"):
            store.set(entry_name(provider_id), key)
    store.set(entry_name("groq"), ODD_GLOBAL)

    # The app, driven as a user would, reading every key.
    app = build_app()
    async with app.run_test() as pilot:
        await pilot.press("r")
        # Quit as the user does: leaving run_test without it tears the screens down with no
        # exit(), and a chat screen still mounting then failed in a Select's own on_mount
        # (once in a clean-clone CI run, under load), which a user's quit passes over. Once
        # the chat screen is up: Pilot waits on the screen's widgets after a key, and a chat
        # screen pushed as the app quit never starts (30 s, then WaitForScreenTimeout).
        await settle(pilot)
        await pilot.press("ctrl+q")

    # Real HTTP through httpx, which logs full URLs at INFO (the Gemini URL carries the key).
    google_key = resolve_key(get_provider("google"), store).value
    per_bot = resolve_key(get_provider("openai"), store, bot_key=PER_BOT_KEY).value
    with json_server() as server:
        async with httpx.AsyncClient() as client:
            await client.post(
                f"{server.base_url}/v1beta/models/m:streamGenerateContent",
                params={"alt": "sse", "key": google_key},
            )
            await client.get(
                f"{server.base_url}/v1/models", headers={"Authorization": f"Bearer {per_bot}"}
            )
    assert server.requests[0].path.endswith(f"key={google_key}")  # the request did carry it

    # A careless debug line, and an exception logged with its traceback.
    log = logging.getLogger("byok_tui.test")
    log.debug("headers were %s", {"x-api-key": FAKE_KEYS["anthropic"], "env": ODD_ENV})
    try:
        raise RuntimeError(f"request to https://h/?key={google_key} failed for {ODD_GLOBAL}")
    except RuntimeError:
        log.exception("call failed")

    for handler in logging.getLogger().handlers:
        handler.flush()
    text = log_file.read_text()
    assert "HTTP Request: POST" in text  # httpx's own lines are there, redacted
    assert "key=[REDACTED]" in text
    assert "call failed" in text
    assert_no_secret(text, (*ALL_SECRETS, ODD_GLOBAL, ODD_ENV))
    assert stat.S_IMODE(log_file.stat().st_mode) == 0o600


def test_the_cli_debug_log_holds_no_key(tmp_path: Path) -> None:
    log_file = tmp_path / "cli.log"
    env_log = tmp_path / "env.log"
    env = {"OPENAI_API_KEY": ENV_KEY}
    stored = {p: k for p, k in FAKE_KEYS.items() if p != "openai"}  # openai comes from env
    for provider_id, key in stored.items():
        assert (
            run_cli("--log", str(log_file), "keys", "set", provider_id, stdin=key).returncode == 0
        )
    for args in (("keys", "list"), ("keys", "get", "groq"), ("keys", "rm", "xai")):
        run_cli("--log", str(log_file), *args, env=env)
    run_cli("keys", "list", env={**env, "BYOK_TUI_LOG": str(env_log)})
    cli_log = log_file.read_text()
    assert "saved app-apikey-anthropic" in cli_log
    assert "key for openai: environment OPENAI_API_KEY" in cli_log
    assert "key for groq: global app-apikey-groq" in env_log.read_text()
    assert_no_secret(log_file.read_text() + env_log.read_text(), ALL_SECRETS)
