"""A change is drawn at the next frame: a key typed just after a frame waits at most one frame
interval for its echo, however long the screen was idle before."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest
from textual.app import App

from byok_tui.compat import timers_tick_at_the_next_interval

pytestmark = pytest.mark.draws  # when frames are drawn

INTERVAL = 0.2  # seconds: long enough that the host's noise cannot blur one interval from two


@pytest.mark.serial  # real time: alone, not beside other tests
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


def test_the_app_installs_its_fixes_of_textual_before_it_runs(tmp_path: Path) -> None:
    """In a process of its own (the fixes are once a process: another test may have made
    them here): making the app makes every timer tick at the next interval, and the other
    fixes of byok_tui/compat.py that patch Textual's classes."""
    probe = (
        "from textual.screen import Screen\n"
        "from textual.timer import Timer\n"
        "from textual.widgets import OptionList\n"
        "from textual.drivers.linux_driver import LinuxDriver\n"
        "from textual.drivers._writer_thread import WriterThread\n"
        "from textual._compositor import Compositor\n"
        "from textual.strip import Strip\n"
        "from textual.widget import Widget\n"
        "from byok_tui.app import ByokApp\n"
        f"ByokApp(None, environ={{'BYOK_TUI_HOME': {str(tmp_path)!r}}})\n"
        "assert getattr(Timer._run, 'next_interval', False), 'timers'\n"
        "assert getattr(Screen._on_resize, 'terminal_size_only', False), 'resizes'\n"
        "assert getattr(OptionList._move_page, 'needs_lines', False), 'page keys'\n"
        "assert getattr(LinuxDriver.run_input_thread, 'ends_with_input', False), 'input'\n"
        "assert getattr(WriterThread.run, 'ends_with_output', False), 'output'\n"
        "assert getattr(Compositor.reflow, 'keeps_its_map', False), 'layouts'\n"
        "assert getattr(Screen._screen_resized, 'once_a_size', False), 'layouts a size'\n"
        "assert getattr(Screen._on_screen_resume, 'styled_once', False), 'styled once'\n"
        "assert getattr(Compositor._get_renders, 'what_they_show', False), 'partial updates'\n"
        "assert getattr(Strip.divide, 'kept_out_of_cycles', False), 'strips'\n"
        "assert getattr(Strip.__init__, 'caches_when_used', False), 'strip caches'\n"
        "assert getattr(Widget._size_updated, 'left_to_the_layout', False), 'resized'\n"
        "assert getattr(Widget._size_updated.replaced, 'sets_sizes_quietly', 0), 'sizes'\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]


async def test_no_frame_is_drawn_between_enter_and_the_request_on_the_wire() -> None:
    """Enter sends at once: the frame that shows the composer emptied, the message and the
    activity line is drawn once the request is on the wire (or ECHO_GRACE later, whichever
    comes first), not while the send is on its way to it. A frame drawn then held the
    request back by its length (2.5 and 1.2 ms of a 12 ms send on a slow host). The frame
    after shows all of it."""
    from textual.screen import Screen

    from byok_tui.core.paths import app_paths
    from byok_tui.keys import entry_name, open_key_store
    from byok_tui.screens.column_base import ECHO_GRACE
    from byok_tui.screens.reply_relay import ReplyRelay
    from byok_tui.widgets.composer import Composer
    from byok_tui.widgets.message_views import UserMessage
    from tests.support.pilot import chat, make_app, replies, settle, wait_for
    from tests.support.provider_server import openai_reply, provider_server

    events: list[tuple[str, float]] = []
    refresh, sent = Screen._compositor_refresh, ReplyRelay.sent

    def drawn(self: Screen[object]) -> None:
        events.append(("frame", time.perf_counter()))
        refresh(self)

    def on_the_wire(self: ReplyRelay) -> None:
        events.append(("sent", time.perf_counter()))
        sent(self)

    open_key_store(app_paths()).set(entry_name("openai"), "sk-proj-" + "W" * 60)
    with provider_server() as server:
        server.reply_with(openai_reply("On its way"))
        app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(Screen, "_compositor_refresh", drawn)
            patch.setattr(ReplyRelay, "sent", on_the_wire)
            async with app.run_test(size=(120, 40)) as pilot:
                await settle(pilot)
                chat(app).query_one(Composer).text = "Hello there"
                await pilot.pause(0.2)
                events.clear()
                pressed = time.perf_counter()
                await pilot.press("enter")
                await wait_for(pilot, lambda: replies(app) == ["On its way"])
                assert chat(app).query_one(Composer).text == ""
                assert len(chat(app).query(UserMessage)) == 1
    on_wire = next(at for what, at in events if what == "sent")
    early = [
        round((at - pressed) * 1000, 1)
        for what, at in events
        if what == "frame" and at < on_wire and at - pressed < ECHO_GRACE
    ]
    assert early == [], f"frames drawn {early} ms after Enter, before the request left"
    assert any(what == "frame" and at >= on_wire for what, at in events), "never drawn"
