"""Credit left on a key, as the provider states it: OpenRouter's `GET /key` (limit, what is
left, usage today and this month, free tier) and DeepSeek's `GET /user/balance`. Asked for only
on an explicit action (Check balance, Test key, `byok-tui balance`): never polled.

The answer is outside text: only numbers, currencies and flags are taken from it, cleaned and
cut short; a label (OpenRouter's may hold part of the key) is never read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from byok_tui.core.registry import Provider
from byok_tui.core.sanitize import clean_line
from byok_tui.providers.errors import protocol_error

BalanceFigure = float | int | str | bool | None


@dataclass(frozen=True, slots=True)
class Balance:
    """What a provider said is left on a key, and when it was asked."""

    provider_id: str
    checked: float  # Unix time
    summary: str  # in words: `$7.50 left of a $10.00 limit · used today $0.10 · ...`
    figures: dict[str, BalanceFigure] = field(default_factory=dict)  # for --json


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _usd(value: float | None) -> str:
    return "?" if value is None else f"${value:,.2f}" if abs(value) >= 0.01 else f"${value:.4f}"


def _openrouter(data: dict[str, Any]) -> tuple[str, dict[str, BalanceFigure]]:
    limit = _number(data.get("limit"))
    remaining = _number(data.get("limit_remaining"))
    today, month = _number(data.get("usage_daily")), _number(data.get("usage_monthly"))
    raw_reset, raw_free = data.get("limit_reset"), data.get("is_free_tier")
    reset = clean_line(raw_reset)[:16] if isinstance(raw_reset, str) else None
    free_tier = raw_free if isinstance(raw_free, bool) else None
    figures: dict[str, BalanceFigure] = {
        "limit_usd": limit,
        "remaining_usd": remaining,
        "limit_reset": reset,
        "usage_usd": _number(data.get("usage")),
        "usage_today_usd": today,
        "usage_month_usd": month,
        "free_tier": free_tier,
    }
    if limit is None:
        parts = ["no credit limit on this key"]
    else:
        parts = [f"{_usd(remaining)} left of a {_usd(limit)} limit"]
        if reset:
            parts[0] += f" (resets {reset})"
    parts.append(f"used {_usd(today)} today · {_usd(month)} this month")
    if free_tier is not None:
        parts.append("free tier" if free_tier else "paid account")
    daily = data.get("free_model_daily_requests")
    if isinstance(daily, dict):
        left, most = _number(daily.get("remaining")), _number(daily.get("limit"))
        figures["free_requests_left_today"] = left
        figures["free_requests_per_day"] = most
        if left is not None and most is not None:
            parts.append(f"{left:.0f}/{most:.0f} free-model requests left today")
    return " · ".join(parts), figures


def _deepseek(data: dict[str, Any]) -> tuple[str, dict[str, BalanceFigure]]:
    available = data.get("is_available")
    infos = data.get("balance_infos")
    parts: list[str] = []
    figures: dict[str, BalanceFigure] = {
        "available": available if isinstance(available, bool) else None
    }
    for info in infos if isinstance(infos, list) else []:
        if not isinstance(info, dict):
            continue
        currency = clean_line(str(info.get("currency", "")))[:8] or "?"
        total = _number(info.get("total_balance"))
        granted = _number(info.get("granted_balance"))
        topped_up = _number(info.get("topped_up_balance"))
        figures[f"total_{currency}"] = total
        figures[f"granted_{currency}"] = granted
        figures[f"topped_up_{currency}"] = topped_up
        shown = "?" if total is None else f"{total:,.2f}"
        pairs = (("granted", granted), ("topped up", topped_up))
        detail = [f"{value:,.2f} {what}" for what, value in pairs if value is not None]
        parts.append(f"{shown} {currency}" + (f" ({', '.join(detail)})" if detail else ""))
        if len(parts) == 4:
            break
    if available is False:
        parts.append("not enough for a request: top up")
    return " · ".join(parts) or "no balance stated", figures


_SHAPES = {"openrouter-key": _openrouter, "deepseek-balance": _deepseek}


def parse_balance(provider: Provider, data: Any, checked: float) -> Balance:
    """The balance in the provider's answer; a ProviderError when it is not in its shape."""
    shape = _SHAPES[provider.balance_shape]
    inner = data
    if provider.balance_shape == "openrouter-key" and isinstance(data, dict):
        inner = data.get("data")  # OpenRouter wraps it
    if not isinstance(inner, dict):
        raise protocol_error(provider, "the balance is not in the expected shape")
    summary, figures = shape(inner)
    return Balance(provider.id, checked, summary, figures)
