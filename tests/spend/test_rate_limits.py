"""Live limits from what the providers already say: every response's rate-limit headers are
kept per provider and key source, shown by `byok-tui limits`, never a key, never polled."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from byok_tui.core.paths import app_paths
from byok_tui.core.sanitize import strip_terminal_controls
from byok_tui.keys import entry_name, open_key_store
from byok_tui.providers.limits import rate_limits
from tests.support.cli import run_cli
from tests.support.keys import FAKE_KEYS
from tests.support.provider_server import ProviderServer, Reply, openai_reply

KEY = "sk-proj-" + "R" * 60
OPENAI_HEADERS = {
    "x-ratelimit-limit-requests": "60",
    "x-ratelimit-remaining-requests": "41",
    "x-ratelimit-reset-requests": "19s",
    "x-ratelimit-limit-tokens": "150000",
    "x-ratelimit-remaining-tokens": "149000",
    "x-ratelimit-reset-tokens": "6m0s",
}


def test_only_rate_limit_headers_are_kept_cleaned_and_without_keys() -> None:
    found = rate_limits(
        {
            "X-RateLimit-Remaining-Requests": "41\x1b[2J",
            "anthropic-ratelimit-tokens-limit": "80000",
            "Retry-After": "7",
            "set-cookie": "session=secret",
            "x-ratelimit-note": f"key {FAKE_KEYS['openai']}",
        }
    )
    assert found is not None
    names = dict(found.headers)
    assert set(names) == {
        "x-ratelimit-remaining-requests",
        "anthropic-ratelimit-tokens-limit",
        "retry-after",
        "x-ratelimit-note",
    }
    assert names["x-ratelimit-remaining-requests"] == "41"
    assert FAKE_KEYS["openai"] not in names["x-ratelimit-note"]
    assert found.requests[0] == "41" and found.tokens[1] == "80000"
    assert rate_limits({"content-type": "text/event-stream"}) is None


@given(st.dictionaries(st.text(max_size=40), st.text(max_size=200), max_size=60))
def test_any_headers_give_a_bounded_clean_record(headers: dict[str, str]) -> None:
    found = rate_limits(headers)
    if found is not None:
        assert len(found.headers) <= 24
        # On one line, with nothing a terminal would act on (an unassigned letter may stay).
        for _name, value in found.headers:
            assert len(value) <= 64 and strip_terminal_controls(value) == value
            assert "\n" not in value and "\t" not in value


def test_ask_keeps_the_limits_the_provider_stated_and_limits_shows_them(
    server: ProviderServer,
) -> None:
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    env = {"BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1"}
    reply = openai_reply("ok")
    reply.headers = {**reply.headers, **OPENAI_HEADERS}
    server.reply_with(reply)
    assert run_cli("ask", "-p", "openai", "hi", env=env).returncode == 0
    (row,) = json.loads(run_cli("limits", "--json").stdout)
    assert (row["provider"], row["key"]) == ("openai", "global")
    assert row["headers"] == OPENAI_HEADERS
    shown = run_cli("limits").stdout
    assert "41/60 requests (reset 19s) · 149000/150000 tokens (reset 6m0s)" in shown
    assert "as of" in shown

    # A 429 says when to come back: kept too, replacing what the last answer said.
    server.reply_with(
        Reply(
            status=429,
            headers={
                "content-type": "application/json",
                "retry-after": "20",
                "x-ratelimit-remaining-requests": "0",
            },
            steps=[b'{"error": {"message": "slow down", "type": "rate_limit"}}'],
        )
    )
    assert run_cli("ask", "-p", "openai", "again", env=env).returncode == 5
    (row,) = json.loads(run_cli("limits", "--json").stdout)
    assert row["headers"] == {"retry-after": "20", "x-ratelimit-remaining-requests": "0"}
    assert KEY not in run_cli("limits", "--json").stdout
    assert "retry after 20 s" in run_cli("limits").stdout


async def test_the_app_keeps_the_limits_of_each_reply(server: ProviderServer) -> None:
    from byok_tui.app_services.services import open_services, open_store
    from tests.support.pilot import (
        WIDTH_WITHOUT_CONFIG_PANE,
        make_app,
        replies,
        replying,
        send,
        settle,
        wait_for,
    )

    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    open_store(open_services()).default_bot("openai", "gpt-5.5")
    reply = openai_reply("ok")
    reply.headers = {**reply.headers, **OPENAI_HEADERS}
    server.reply_with(reply)
    app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "hi")
        await wait_for(pilot, lambda: replies(app) == ["ok"] and not replying(app))
    ((provider, key, _seen, headers),) = open_store(open_services()).ledger.rate_limits()
    assert (provider, key, headers) == ("openai", "global", OPENAI_HEADERS)


def test_the_sidebar_note_says_only_what_matters_and_goes_stale() -> None:
    def note(headers: dict[str, str], age: float = 1.0) -> str | None:
        found = rate_limits(headers)
        assert found is not None
        return found.compact(age)

    assert note(OPENAI_HEADERS) is None  # 41 of 60 requests left: room enough
    low = {**OPENAI_HEADERS, "x-ratelimit-remaining-requests": "12"}
    assert note(low) == "12/60 req left"
    tokens = {
        "anthropic-ratelimit-tokens-limit": "80000",
        "anthropic-ratelimit-tokens-remaining": "900",
    }
    assert note(tokens) == "900/80k tok left"
    assert note({"retry-after": "20"}, age=5) == "wait 15 s"
    assert note({"retry-after": "20"}, age=25) is None  # the wait is over
    assert note(low, age=3600) is None  # an hour old: says nothing any more
    assert note({"x-ratelimit-remaining-requests": "soon"}) is None


async def test_after_a_reply_that_left_few_requests_the_sidebar_says_so(
    server: ProviderServer,
) -> None:
    from textual.widgets import OptionList

    from byok_tui.app_services.services import open_services, open_store
    from tests.support.pilot import (
        WIDTH_WITHOUT_CONFIG_PANE,
        chat,
        make_app,
        replies,
        replying,
        send,
        settle,
        wait_for,
    )

    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    open_store(open_services()).default_bot("openai", "gpt-5.5")
    reply = openai_reply("ok")
    reply.headers = {**reply.headers, **OPENAI_HEADERS, "x-ratelimit-remaining-requests": "3"}
    server.reply_with(reply)
    app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)

        def openai_row() -> str:
            options = chat(app).query_one("#providers", OptionList)
            return str(options.get_option("provider:openai").prompt)

        assert "req left" not in openai_row()
        await send(pilot, "hi")
        await wait_for(pilot, lambda: replies(app) == ["ok"] and not replying(app))
        await wait_for(pilot, lambda: "3/60 req left" in openai_row())
        assert openai_row() == "● OpenAI  key set · 3/60 req left"


def test_limits_leaves_out_a_wait_that_is_over_and_aligns_a_long_key_source() -> None:
    import time

    from byok_tui.app_services.services import open_services, open_store

    store = open_store(open_services())
    store.ledger.save_rate_limits("openai", "global", (("retry-after", "30"),))
    store.ledger.save_rate_limits(
        "groq", "key work from command printkey.sh", (("x-ratelimit-remaining-requests", "9"),)
    )
    with store.transaction() as db:  # said 15 minutes ago
        db.execute(
            "UPDATE rate_limits SET seen = ? WHERE provider = 'openai'", (time.time() - 900,)
        )
    shown = run_cli("limits").stdout.splitlines()
    (openai,) = [line for line in shown if line.startswith("openai")]
    (groq,) = [line for line in shown if line.startswith("groq")]
    assert "retry after" not in openai, openai
    assert openai.index("global") == groq.index("key work")  # the key column
    assert openai.index("no figures") == groq.index("9/?"), shown  # the figures, after it
