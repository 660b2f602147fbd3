"""Money as the user reads it: one format for every amount shown or exported."""

from __future__ import annotations

import math


def format_usd(amount: float) -> str:
    """$12.34, $0.123, and below a cent two significant digits ($0.0031)."""
    if amount == 0:
        return "$0"
    if amount >= 1:
        return f"${amount:,.2f}"
    if amount >= 0.01:
        return f"${amount:.3f}"
    digits = 1 - math.floor(math.log10(amount))
    return f"${amount:.{digits}f}".rstrip("0")
