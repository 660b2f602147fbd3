"""What a request will cost before it is sent: a local estimate, never a request.

Tokens are estimated from the text's length (about four characters a token in English, plus a
few for each message's framing): no tokenizer is shipped, and none may be fetched at run time.
The input price is the reply's own (pricing.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from byok_tui.core.money import format_usd
from byok_tui.providers.types import Usage
from byok_tui.spend.pricing import cost_of

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4  # tokens each message's role and framing take


@dataclass(frozen=True, slots=True)
class Estimate:
    tokens: int
    cost_usd: float | None  # None: the model's price is not known

    def line(self) -> str:
        """`≈ 3.4k tokens in · ≈ $0.010`."""
        cost = "price unknown" if self.cost_usd is None else f"≈ {format_usd(self.cost_usd)}"
        return f"≈ {count_tokens(self.tokens)} tokens in · {cost}"


def estimated_tokens(texts: Iterable[str]) -> int:
    """System prompt, history and draft: each text one message."""
    return sum(math.ceil(len(text) / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD for text in texts if text)


def estimate(provider_id: str, model_id: str, texts: Iterable[str], extra: int = 0) -> Estimate:
    """`extra`: tokens sent besides the texts (the tools' definitions)."""
    tokens = estimated_tokens(texts) + extra
    return Estimate(tokens, cost_of(provider_id, model_id, Usage(tokens, 0)).usd)


def count_tokens(tokens: int) -> str:
    """`812`, `3.4k`, `1.2M`."""
    if tokens < 1000:
        return str(tokens)
    if tokens < 1_000_000:
        return f"{tokens / 1000:.1f}k"
    return f"{tokens / 1_000_000:.1f}M"
