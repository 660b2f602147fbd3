"""Timer: a tick that runs late waits for the interval after the next one.

A repeating timer whose tick was held up past its next due time drops the missed tick
(`skip=True`, the default) and should tick at the next interval boundary. Textual 8.2.8's
`Timer._run` computes `count = int((now - start) / interval + 1)`, one interval too many,
so the next tick comes up to two intervals after the delay instead of within one.

Run: python 09_timer_late_tick.py (plain Textual 8.2.8; no byok-tui).
Prints REPRODUCED when the tick after a delay of 1.5 intervals comes at 3 intervals.
"""

import time

from textual.app import App

INTERVAL = 0.2


class LateTick(App[None]):
    def on_mount(self) -> None:
        self.ticks: list[float] = []
        self.start = time.monotonic()
        self.set_interval(INTERVAL, self.tick)

    def tick(self) -> None:
        self.ticks.append(time.monotonic() - self.start)
        if len(self.ticks) == 1:
            time.sleep(INTERVAL * 1.5)  # the loop is busy past the second tick's time


async def main() -> str:
    app = LateTick()
    async with app.run_test() as pilot:
        await pilot.pause(INTERVAL * 5)
    first, second = app.ticks[0], app.ticks[1]
    # Due: 0.2 (ran), 0.4 (missed: busy until 0.5), so the next one is due at 0.6.
    late_by = second - 3 * INTERVAL
    if late_by > INTERVAL * 0.6:
        return f"REPRODUCED: ticks at {first:.2f} s and {second:.2f} s (due at 0.60 s)"
    return f"NOT REPRODUCED: ticks at {first:.2f} s and {second:.2f} s"


if __name__ == "__main__":
    import asyncio

    print(asyncio.run(main()))
