"""What a reply cost: the tokens its provider reported, priced with genai-prices' offline data.

No network call, ever: genai-prices' own price updates are not used, so a price is the one
shipped with the installed version (named in every price we record). A price that is not known
is unknown, never $0; a local runtime costs $0. Amounts are US dollars.
"""

from __future__ import annotations

import gc

from byok_tui.core.money import format_usd
from byok_tui.core.records import Cost, Spend
from byok_tui.core.registry import UnknownProviderError, get_provider
from byok_tui.providers.types import Usage

LOCAL_RUNTIME_PRICE = "local runtime: no charge"
FREE_MODEL_PRICE = "free model: no charge"
NO_USAGE = "the provider reported no token counts"

_price_data_frozen = False


def prices_version() -> str:
    from importlib.metadata import version

    return f"genai-prices {version('genai-prices')}"


def cost_of(provider_id: str, model_id: str, usage: Usage | None) -> Cost:
    """The cost of one reply, worked out once when it ends (a later price never changes it).
    A provider no longer defined (the user removed it) has no known price."""
    try:
        provider = get_provider(provider_id)
    except UnknownProviderError:
        return Cost(None, f"price unknown: {provider_id} is not a defined provider")
    if not provider.needs_key and not provider.custom:  # the built-in local runtime
        return Cost(0.0, LOCAL_RUNTIME_PRICE)
    if usage is None or (usage.input_tokens is None and usage.output_tokens is None):
        return Cost(None, NO_USAGE)
    from genai_prices import Usage as PricedUsage
    from genai_prices import calc_price

    billed = PricedUsage(
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        cache_read_tokens=usage.cached_input_tokens or 0,
        cache_write_tokens=usage.cache_write_tokens or 0,
    )
    try:
        priced = calc_price(billed, model_id, provider_id=provider.id)
    except LookupError:
        priced = None
    _freeze_price_data()  # loaded by now, the model priced or not
    if priced is None:
        known = next((m for m in provider.models if m.id == model_id), None)
        if known is not None and known.free:
            return Cost(0.0, FREE_MODEL_PRICE)
        return Cost(None, f"price unknown: {prices_version()} has no price for {model_id}")
    return Cost(float(priced.total_price), f"{prices_version()}: {priced.model_price}")


def _freeze_price_data() -> None:
    """Once a process, after the first price: move genai-prices' data (~72,000 objects, which
    the process keeps to its end) out of the garbage collector's sight. Left to it, ~12,000
    were still young when the first reply streamed, a quarter of what each collection of the
    older generation then scanned: pauses of 9-17 ms that a key typed meanwhile waited for.
    What else is alive then is frozen with it (the app's heap was frozen at start already);
    of it, ~400 objects were cyclic garbage, kept for good."""
    global _price_data_frozen
    if not _price_data_frozen:
        _price_data_frozen = True
        gc.freeze()


def spend_lines(spend: Spend, display_name: str) -> list[str]:
    """`Spent on OpenAI: $0.012 today · $0.34 this month`, what each key source spent this
    month (when there is more than one), then each budget (each marked on its own)."""
    lines = [
        f"Spent on {display_name}: {format_usd(spend.today)} today · "
        f"{format_usd(spend.month)} this month"
    ]
    if len(spend.month_by_key) > 1:
        lines.append(
            "This month by key: "
            + " · ".join(f"{source} {format_usd(usd)}" for source, usd in spend.month_by_key)
        )
    lines += list(spend.budgets)  # each marked on its own (budgets.standing_line)
    if spend.free_tier:
        lines.append(f"{'⚠ ' if spend.free_tier_near else ''}Free tier: {spend.free_tier}")
    return lines


def usage_line(
    input_tokens: int | None, output_tokens: int | None, cost_usd: float | None, *, priced: bool
) -> str:
    """`1,204 in · 388 out · $0.0031`; "price unknown" where it is not known, never $0."""
    parts = []
    if input_tokens is not None:
        parts.append(f"{input_tokens:,} in")
    if output_tokens is not None:
        parts.append(f"{output_tokens:,} out")
    if cost_usd is not None:
        parts.append(format_usd(cost_usd))
    elif priced and parts:
        parts.append("price unknown")
    return " · ".join(parts)
