"""Which calls a test's event loop made itself: what the screen would have waited for."""

from __future__ import annotations

import threading
from typing import Any

import pytest


def calls_on_this_thread(
    monkeypatch: pytest.MonkeyPatch, methods: list[tuple[type, str]]
) -> list[str]:
    """The names of `methods` called on the calling thread (the event loop's) from now on,
    in order; calls from worker threads are not listed."""
    loop_thread = threading.current_thread()
    on_the_loop: list[str] = []
    for owner, name in methods:
        original = getattr(owner, name)

        def watched(
            self: object, *args: Any, _original: Any = original, _name: str = name, **kwargs: Any
        ) -> Any:
            if threading.current_thread() is loop_thread:
                on_the_loop.append(_name)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(owner, name, watched)
    return on_the_loop
