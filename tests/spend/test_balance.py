"""Credit left on a key, from what the provider states when asked (never polled): OpenRouter's
`GET /key` through the base URL (overrides included), DeepSeek's `GET /user/balance`."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from byok_tui.core.registry import get_provider, providers
from byok_tui.providers.balance import parse_balance
from byok_tui.providers.errors import ProviderError
from tests.support.cli import run_cli
from tests.support.provider_server import ProviderServer, Reply

OPENROUTER_KEY = "sk-or-v1-" + "b" * 60 + "c0de"
DEEPSEEK_KEY = "sk-" + "d" * 32
# The shape OpenRouter answers with; the label shows part of the key and is never read.
OPENROUTER_KEY_INFO = {
    "data": {
        "label": "sk-or-v1-bbb...c0de",
        "limit": 10,
        "usage": 2.5,
        "is_free_tier": False,
        "limit_remaining": 7.5,
        "limit_reset": "monthly",
        "include_byok_in_limit": False,
        "usage_daily": 0.1,
        "usage_weekly": 0.5,
        "usage_monthly": 2.0,
        "byok_usage": 0,
        "is_provisioning_key": False,
    }
}
DEEPSEEK_BALANCE = {
    "is_available": True,
    "balance_infos": [
        {
            "currency": "USD",
            "total_balance": "110.00",
            "granted_balance": "10.00",
            "topped_up_balance": "100.00",
        }
    ],
}


def answer(body: dict[str, Any]) -> Reply:
    return Reply(headers={"content-type": "application/json"}, steps=[json.dumps(body).encode()])


def test_openrouter_states_the_keys_limit_what_is_left_and_its_usage(
    server: ProviderServer,
) -> None:
    run_cli("keys", "set", "openrouter", stdin=OPENROUTER_KEY)
    server.reply_with(answer(OPENROUTER_KEY_INFO))
    env = {"BYOK_TUI_OPENROUTER_BASE_URL": f"{server.base_url}/gateway/v1"}  # an override
    printed = run_cli("balance", "openrouter", "--json", env=env)
    assert printed.returncode == 0, printed.stderr

    (seen,) = server.requests
    assert (seen.method, seen.target) == ("GET", "/gateway/v1/key")
    assert seen.header("authorization") == f"Bearer {OPENROUTER_KEY}"
    (row,) = json.loads(printed.stdout)
    assert row["provider"] == "openrouter"
    assert (row["limit_usd"], row["remaining_usd"], row["limit_reset"]) == (10, 7.5, "monthly")
    assert (row["usage_today_usd"], row["usage_month_usd"], row["free_tier"]) == (0.1, 2.0, False)
    assert row["summary"] == (
        "$7.50 left of a $10.00 limit (resets monthly) · used $0.10 today · $2.00 this month"
        " · paid account"
    )
    assert "c0de" not in printed.stdout.replace(row["summary"], "")  # the label is not read

    (logged,) = json.loads(run_cli("requests", "--json").stdout)
    assert (logged["purpose"], logged["path"], logged["status"]) == (
        "balance",
        "/gateway/v1/key",
        200,
    )


def test_deepseek_states_its_balance_in_its_currency(server: ProviderServer) -> None:
    run_cli("keys", "set", "deepseek", stdin=DEEPSEEK_KEY)
    server.reply_with(answer(DEEPSEEK_BALANCE))
    env = {"BYOK_TUI_DEEPSEEK_BASE_URL": server.base_url}
    printed = run_cli("balance", env=env)  # every provider that states one and has a key
    assert printed.returncode == 0, printed.stderr
    assert [r.target for r in server.requests] == ["/user/balance"]
    assert "deepseek     110.00 USD (10.00 granted, 100.00 topped up)  (as of " in printed.stdout


def test_a_refused_balance_check_says_why_and_exits_1(server: ProviderServer) -> None:
    run_cli("keys", "set", "deepseek", stdin=DEEPSEEK_KEY)
    error = {"error": {"message": "Authentication Fails", "type": "authentication_error"}}
    server.reply_with(
        Reply(401, {"content-type": "application/json"}, [json.dumps(error).encode()])
    )
    printed = run_cli("balance", "deepseek", env={"BYOK_TUI_DEEPSEEK_BASE_URL": server.base_url})
    assert printed.returncode == 1
    assert "DeepSeek" in printed.stderr and DEEPSEEK_KEY not in printed.stderr + printed.stdout


def test_a_provider_that_states_no_balance_is_told_so_without_a_request() -> None:
    run_cli("keys", "set", "groq", stdin="gsk_" + "g" * 52)
    printed = run_cli("balance", "groq")
    assert printed.returncode == 1
    assert "Groq does not tell a key's balance through its API" in printed.stderr
    nothing = run_cli("balance")  # no key: 3, as ask says it, not 2 (bad usage)
    assert nothing.returncode == 3 and "no key is set for OpenRouter or DeepSeek" in nothing.stderr
    named = run_cli("balance", "openrouter")
    assert named.returncode == 3 and "No API key for OpenRouter" in named.stderr


def test_every_balance_shape_in_the_registry_is_one_byok_tui_reads() -> None:
    for provider in providers():
        if provider.balance_path:
            parse_balance(provider, {"data": {}} if "openrouter" in provider.id else {}, 0.0)


json_values = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=20), inner, max_size=6)
    ),
    max_leaves=30,
)


@pytest.mark.parametrize("provider_id", ["openrouter", "deepseek"])
@given(data=json_values)
def test_any_answer_gives_a_clean_balance_or_a_protocol_error(provider_id: str, data: Any) -> None:
    try:
        balance = parse_balance(get_provider(provider_id), data, 0.0)
    except ProviderError:
        return
    assert balance.summary.isprintable() and len(balance.summary) < 400


async def test_settings_checks_the_balance_on_request_and_as_part_of_test_key(
    server: ProviderServer,
) -> None:
    from textual.widgets import Button

    from byok_tui.core.paths import app_paths
    from byok_tui.keys import entry_name, open_key_store
    from tests.support.pilot import WIDTH_WITHOUT_CONFIG_PANE, make_app, settle, wait_for

    open_key_store(app_paths()).set(entry_name("openrouter"), OPENROUTER_KEY)
    app = make_app(BYOK_TUI_OPENROUTER_BASE_URL=f"{server.base_url}/api/v1")
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 60)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)

        def balance_shown() -> str:
            return str(app.screen.query_one("#row-openrouter .balance").render())

        server.reply_with(answer(OPENROUTER_KEY_INFO))
        app.screen.query_one("#row-openrouter .check-balance", Button).press()
        await wait_for(pilot, lambda: "$7.50 left of a $10.00 limit" in balance_shown())
        assert "(as of " in balance_shown()
        assert [r.target for r in server.requests] == ["/api/v1/key"]

        listing = answer({"data": [{"id": "openrouter/free"}]})
        server.reply_with(listing, answer({"data": {**OPENROUTER_KEY_INFO["data"], "limit": 20}}))
        app.screen.query_one("#row-openrouter .test-key", Button).press()
        await wait_for(pilot, lambda: "left of a $20.00 limit" in balance_shown())
    assert [r.target for r in server.requests] == ["/api/v1/key", "/api/v1/models", "/api/v1/key"]
