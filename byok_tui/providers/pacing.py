"""Client-side pacing to a model's known requests-per-minute limit.

Sending a request that the provider will refuse with 429 wastes the user's time and, on free
tiers, counts against a daily cap; waiting a few seconds instead is better, and the wait is
reported so that the UI can show a countdown.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

WINDOW_SECONDS = 60.0


class RequestPacer:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._sent: dict[tuple[str, str], deque[float]] = {}

    def reserve(self, provider_id: str, model_id: str, requests_per_minute: int | None) -> float:
        """Book a send slot; return how many seconds to wait before using it."""
        if not requests_per_minute:
            return 0.0
        now = self._clock()
        window = self._sent.setdefault((provider_id, model_id), deque())
        while window and window[0] <= now - WINDOW_SECONDS:
            window.popleft()
        if len(window) < requests_per_minute:
            window.append(now)
            return 0.0
        slot = window.popleft() + WINDOW_SECONDS
        window.append(slot)
        return max(0.0, slot - now)
