"""A change is drawn at the next frame: a key typed just after a frame waits at most one frame
interval for its echo, however long the screen was idle before."""

from __future__ import annotations

import asyncio
import time

import pytest
from textual.app import App

from byok_tui.compat import timers_tick_at_the_next_interval

pytestmark = pytest.mark.serial  # real time: alone, not beside other tests

INTERVAL = 0.2  # seconds: long enough that the host's noise cannot blur one interval from two


async def test_a_timer_resumed_just_after_a_late_tick_ticks_within_one_interval() -> None:
    """As Textual's screen update timer is used: it pauses itself at each tick and is resumed
    when something needs drawing. Resumed after an idle spell, it ticks at once (a late tick);
    resumed again just after, the next tick must come at the next interval, not the one after
    (Textual 8.2.8 skipped one: a key typed just after a frame at 120 frames a second was drawn
    8-17 ms later instead of 0-8, at 60 frames a second 17-33 ms)."""
    timers_tick_at_the_next_interval()
    ticks: list[float] = []

    async with App[None]().run_test() as pilot:

        def tick() -> None:  # as the screen's update timer does
            ticks.append(time.perf_counter())
            timer.pause()

        timer = pilot.app.set_interval(INTERVAL, tick, pause=True)
        timer.resume()
        while not ticks:
            await asyncio.sleep(0.01)
        # Idle for two and a half intervals; then something asks for a frame.
        await asyncio.sleep(INTERVAL * 2.5 - (time.perf_counter() - ticks[0]))
        timer.resume()
        while len(ticks) < 2:
            await asyncio.sleep(0.005)
        timer.resume()  # asked again just after the late tick (a key typed)
        resumed = time.perf_counter()
        while len(ticks) < 3:
            await asyncio.sleep(0.005)

    assert ticks[1] - ticks[0] == pytest.approx(INTERVAL * 2.5, abs=INTERVAL / 4)
    waited = ticks[2] - resumed
    assert waited < INTERVAL, f"the next tick came {waited * 1000:.0f} ms after it was asked for"
