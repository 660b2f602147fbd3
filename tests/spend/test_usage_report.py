"""`byok-tui usage`: requests, tokens and cost of the replies, grouped; costs come from the token
counts the provider streamed, and an unknown price is null, never 0."""

from __future__ import annotations

import json

from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.providers.types import Usage
from byok_tui.spend.pricing import cost_of
from tests.support.cli import run_cli
from tests.support.provider_server import ProviderServer, openai_reply

KEY = "sk-proj-" + "U" * 60


def test_usage_sums_what_ask_was_billed_per_model_and_leaves_unknown_prices_null(
    server: ProviderServer,
) -> None:
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    env = {"BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1"}
    for model, prompt_tokens in (("gpt-5.5", 1000), ("gpt-5.5", 3000), ("gpt-unpriced", 50)):
        server.reply_with(
            openai_reply("ok", usage={"prompt_tokens": prompt_tokens, "completion_tokens": 10})
        )
        done = run_cli("ask", "-p", "openai", "-m", model, "hi", env=env)
        assert done.returncode == 0, done.stderr

    rows = json.loads(run_cli("usage", "--json").stdout)
    by_model = {row["model"]: row for row in rows}
    priced = by_model["gpt-5.5"]
    assert (priced["provider"], priced["requests"]) == ("openai", 2)
    assert (priced["input_tokens"], priced["output_tokens"]) == (4000, 20)
    expected = sum(cost_of("openai", "gpt-5.5", Usage(n, 10)).usd or 0.0 for n in (1000, 3000))
    assert abs(priced["cost_usd"] - expected) < 1e-12
    assert by_model["gpt-unpriced"]["cost_usd"] is None  # unknown: never 0

    (provider,) = json.loads(run_cli("usage", "--by", "provider", "--json").stdout)
    assert provider["requests"] == 3 and provider["unpriced"] == 1
    assert {"provider", "model", "requests", "input_tokens", "output_tokens", "cost_usd"} <= set(
        provider
    )
    (key,) = json.loads(run_cli("usage", "--by", "key", "--json").stdout)
    assert key["key"] == "global"
    text = run_cli("usage").stdout
    assert "gpt-unpriced" in text and "price unknown" in text
    assert json.loads(run_cli("usage", "--since", "1m", "--json").stdout) != []


def test_a_send_refused_before_any_request_is_no_request_in_usage() -> None:
    """No key, a budget reached, a key command that failed: nothing was sent, so usage (the
    shell's and F8's, one query) counts no request and no 'price unknown' reply for them."""
    from byok_tui.app_services.services import open_services, open_store
    from byok_tui.spend.usage_report import read_usage_overview

    assert run_cli("ask", "-p", "google", "hi").returncode == 3  # no key: stored as an error
    assert run_cli("keys", "set", "groq", "--command", "false").returncode == 0
    assert run_cli("ask", "-p", "groq", "hi").returncode == 3  # its command failed
    shown = json.loads(run_cli("usage", "--by", "provider", "--json").stdout)
    assert shown == [], shown
    assert read_usage_overview(open_store(open_services())).providers == ()
