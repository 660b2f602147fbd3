"""Numbers a provider states (waits, resets) are outside input: each is bounded (a wait at
most a day) before it is used or stored, and a bad value already stored reads as a clean
default. One hostile header must never break the app for good."""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.paths import app_paths
from byok_tui.core.records import LONGEST_WAIT
from byok_tui.keys import entry_name, open_key_store
from byok_tui.keys.base import fingerprint
from byok_tui.providers.errors import retry_after_seconds
from byok_tui.providers.limits import rate_limits
from tests.support.cli import run_cli
from tests.support.pilot import WIDTH_WITHOUT_CONFIG_PANE, make_app, settle
from tests.support.provider_server import ProviderServer, Reply

KEY = "sk-proj-" + "W" * 60


@pytest.mark.parametrize(
    "header",
    [
        {"retry-after": "inf"},
        {"retry-after": "-inf"},
        {"retry-after": "nan"},
        {"retry-after": "1e309"},
        {"retry-after-ms": "inf"},
        {"retry-after": "-5"},
        {"x-ratelimit-reset": "1e400"},
        {"ratelimitbysize-reset": "Infinity"},
    ],
)
def test_a_wait_a_provider_states_is_finite_and_at_most_a_day(header: dict[str, str]) -> None:
    seconds = retry_after_seconds(header, None, None, now=1_000.0)
    assert seconds is None or (math.isfinite(seconds) and 0 <= seconds <= LONGEST_WAIT)


@given(st.dictionaries(st.sampled_from(["retry-after", "retry-after-ms"]), st.text(max_size=30)))
def test_any_wait_header_gives_a_bounded_wait_or_none(headers: dict[str, str]) -> None:
    seconds = retry_after_seconds(headers, None, "try again in 1e999s", now=1_000.0)
    assert seconds is None or (math.isfinite(seconds) and 0 <= seconds <= LONGEST_WAIT)


def test_the_sidebar_note_of_an_endless_wait_is_no_crash() -> None:
    found = rate_limits({"retry-after": "inf"})
    assert found is not None
    assert found.compact(0.0) in (None, "wait 86400 s")
    assert found.describe()


def test_one_429_with_an_endless_wait_leaves_keys_list_and_the_app_working(
    server: ProviderServer,
) -> None:
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    env = {"BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1"}
    server.reply_with(
        Reply(
            status=429,
            headers={"content-type": "application/json", "retry-after": "inf"},
            steps=[b'{"error": {"message": "slow down", "type": "rate_limit"}}'],
        )
    )
    assert run_cli("ask", "-p", "openai", "hi", env=env).returncode == 5
    listed = run_cli("keys", "list")
    assert listed.returncode == 0, listed.stderr
    assert "cooling" in listed.stdout
    limits = run_cli("limits")
    assert limits.returncode == 0, limits.stderr


async def test_a_bad_wait_already_stored_reads_as_a_clean_default() -> None:
    """A database written before waits were bounded may hold one that never ends."""
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    store = open_store(open_services())
    store.default_bot("openai", "gpt-5.5")
    with store.transaction() as db:
        db.execute(
            "INSERT INTO key_health (provider, fingerprint, name, state, until, checked,"
            " last_used) VALUES ('openai', ?, 'default', 'cooling', ?, ?, ?)",
            (fingerprint(KEY), math.inf, time.time(), time.time()),
        )
    listed = run_cli("keys", "list")
    assert listed.returncode == 0, listed.stderr
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        assert app.is_running


def test_token_counts_no_call_could_have_are_not_stored(server: ProviderServer) -> None:
    """SQLite holds integers below 2**63: a usage chunk saying 10**30 tokens crashed the
    save; a negative count would make spend negative."""
    from tests.support.provider_server import openai_reply

    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    env = {"BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1"}
    server.reply_with(
        openai_reply("hello", usage={"prompt_tokens": 10**30, "completion_tokens": -7})
    )
    asked = run_cli("ask", "-p", "openai", "hi", env=env)
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout == "hello\n"
    usage = run_cli("usage")
    assert usage.returncode == 0 and "-7" not in usage.stdout
