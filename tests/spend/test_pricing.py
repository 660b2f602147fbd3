"""A reply's cost: priced from genai-prices' offline data, never $0 when unknown, $0 locally."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from byok_tui.core.money import format_usd
from byok_tui.core.registry import get_provider
from byok_tui.providers.types import Usage
from byok_tui.spend.pricing import (
    FREE_MODEL_PRICE,
    LOCAL_RUNTIME_PRICE,
    NO_USAGE,
    cost_of,
    usage_line,
)


def test_a_known_model_is_priced_with_cached_input_at_its_own_price() -> None:
    from genai_prices import Usage as PricedUsage
    from genai_prices import calc_price

    usage = Usage(1000, 500, cached_input_tokens=200)
    cost = cost_of("openai", "gpt-5.5", usage)
    expected = calc_price(
        PricedUsage(input_tokens=1000, output_tokens=500, cache_read_tokens=200),
        "gpt-5.5",
        provider_id="openai",
    ).total_price
    assert cost.usd == pytest.approx(float(expected))
    uncached = cost_of("openai", "gpt-5.5", Usage(1000, 500))
    assert cost.usd is not None and uncached.usd is not None
    assert cost.usd < uncached.usd, "cached input costs less"
    assert cost.price.startswith("genai-prices ") and "input MTok" in cost.price


def test_an_unknown_model_has_an_unknown_cost_never_zero() -> None:
    cost = cost_of("openai", "a-model-nobody-prices", Usage(1000, 500))
    assert cost.usd is None
    assert cost.price.startswith("price unknown")
    assert usage_line(1000, 500, cost.usd, priced=True) == "1,000 in · 500 out · price unknown"


def test_a_local_runtime_costs_nothing() -> None:
    assert not get_provider("ollama").needs_key
    assert cost_of("ollama", "llama3.2", Usage(10, 10)).usd == 0.0
    assert cost_of("ollama", "llama3.2", None).price == LOCAL_RUNTIME_PRICE


def test_a_free_model_the_price_data_does_not_know_costs_nothing() -> None:
    openrouter = get_provider("openrouter")
    free = next(m for m in openrouter.models if m.free and m.id == "openrouter/free")
    cost = cost_of("openrouter", free.id, Usage(10, 10))
    assert (cost.usd, cost.price) == (0.0, FREE_MODEL_PRICE)


def test_no_token_counts_means_no_cost() -> None:
    assert cost_of("openai", "gpt-5.5", None) == cost_of("openai", "gpt-5.5", Usage())
    assert cost_of("openai", "gpt-5.5", None).usd is None
    assert cost_of("openai", "gpt-5.5", None).price == NO_USAGE


def test_the_reply_line_reads_as_the_user_expects() -> None:
    assert usage_line(1204, 388, 0.0031, priced=True) == "1,204 in · 388 out · $0.0031"
    assert usage_line(None, None, None, priced=True) == ""


@given(st.floats(min_value=1e-9, max_value=1e6, allow_nan=False))
def test_an_amount_is_never_shown_as_zero_or_in_exponent_form(amount: float) -> None:
    shown = format_usd(amount)
    assert shown.startswith("$") and "e" not in shown and "E" not in shown
    assert float(shown[1:].replace(",", "")) > 0, shown
    # Two significant digits at least: never off by more than 10 %.
    assert math.isclose(float(shown[1:].replace(",", "")), amount, rel_tol=0.1, abs_tol=0.005)


def test_the_price_data_is_kept_out_of_the_collectors_sight_once_loaded() -> None:
    """The first price loads genai-prices' data (~72,000 objects), which the process keeps
    to its end: left to the collector, ~12,000 of them were still young when the first reply
    streamed, a quarter of what the older generation's collection then scanned (a pause that
    delays a key typed meanwhile). Once loaded it is frozen (gc.freeze), once a process."""
    import subprocess
    import sys

    probe = (
        "import gc\n"
        "from byok_tui.spend.pricing import cost_of\n"
        "from byok_tui.providers.types import Usage\n"
        "assert gc.get_freeze_count() == 0\n"
        "cost_of('openai', 'gpt-5.5', Usage(10, 0))\n"
        "frozen = gc.get_freeze_count()\n"
        "assert frozen > 50_000, frozen\n"
        "kept = [[] for _ in range(1000)]\n"
        "cost_of('openai', 'gpt-5.5', Usage(20, 0))\n"
        "assert gc.get_freeze_count() == frozen, 'frozen again'\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]


def test_a_key_less_provider_of_the_users_own_is_not_priced_as_free() -> None:
    """`provider add … --no-key` is allowed for a remote https gateway, which may well bill
    its owner: an unknown model there is 'price unknown', never $0 like the local runtime."""
    from byok_tui.core.registry import custom_provider, use_custom_providers

    use_custom_providers(
        (custom_provider("gateway", name="GW", base_url="https://gw.example/v1", key="none"),)
    )
    cost = cost_of("gateway", "house-model-7b", Usage(1000, 200))
    assert cost.usd is None and cost.price != LOCAL_RUNTIME_PRICE
