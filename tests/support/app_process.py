"""The real app in a process of its own, driven by Pilot, taking orders on standard input.

`python -m tests.support.app_process` starts byok-tui headless (environment as given, so a
test points it at its loopback provider) and reads one order per line:

- `send TEXT`: type TEXT in the composer, press Enter, wait for the reply to end;
- `quit`: leave the app as ctrl+q would.

It answers each order with one line, `ok N` (N: replies now on screen) or `error WHY`, so the
test can alternate it with other processes and know exactly what it has done.
"""

from __future__ import annotations

import asyncio
import sys

from tests.support.pilot import make_app, replies, replying, send, settle, wait_for


async def main() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        print("ready", flush=True)
        while line := await asyncio.to_thread(sys.stdin.readline):
            order, _, text = line.rstrip("\n").partition(" ")
            if order == "quit":
                break
            if order != "send":
                print(f"error unknown order {order!r}", flush=True)
                continue
            expected = len(replies(app)) + 1

            def reply_ended(expected: int = expected) -> bool:
                return len(replies(app)) == expected and not replying(app)

            await send(pilot, text)
            try:
                await wait_for(pilot, reply_ended)
            except AssertionError:
                print("error the reply never ended", flush=True)
                continue
            print(f"ok {len(replies(app))}", flush=True)
        await pilot.press("ctrl+q")
    print("quit", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
