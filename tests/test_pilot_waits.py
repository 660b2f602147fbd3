"""The suite's own promise about Pilot's waits (tests/conftest.py,
`pilot_waits_for_the_widgets_still_busy`): a `press` or `pause` still waits until every widget
that had something to handle has handled it; only widgets idle in their message loop are no
longer sent a callback to wait on."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.message import Message
from textual.message_pump import MessagePump
from textual.widgets import Static

from byok_tui.compat import checked_version_installed


class Slow(Static):
    """Handles a `Go` in two steps, a wait between them."""

    @dataclass
    class Go(Message):
        seconds: float

    def __init__(self) -> None:
        super().__init__("slow")
        self.started = False
        self.handled: list[float] = []  # each Go's seconds, once handled

    async def on_slow_go(self, message: Go) -> None:
        self.started = True
        await asyncio.sleep(message.seconds)
        self.handled.append(message.seconds)


class ManyWidgets(App[None]):
    def compose(self) -> ComposeResult:
        yield Slow()
        for number in range(60):
            yield Static(f"line {number}")


async def test_a_pause_waits_for_a_widget_still_in_its_handler() -> None:
    app = ManyWidgets()
    async with app.run_test() as pilot:
        slow = app.query_one(Slow)
        slow.post_message(Slow.Go(0.2))
        while not slow.started:  # its queue is empty now, its handler under way
            await asyncio.sleep(0.005)
        await pilot.pause()
        assert slow.handled == [0.2], "a pause came back while a widget was still handling one"


async def test_a_key_press_waits_for_a_message_still_queued_to_a_widget() -> None:
    app = ManyWidgets()
    async with app.run_test() as pilot:
        slow = app.query_one(Slow)
        slow.post_message(Slow.Go(0.0))
        slow.post_message(Slow.Go(0.2))  # queued behind the first
        await pilot.press("x")
        assert slow.handled == [0.0, 0.2], "a key press came back before a widget was done"


@pytest.mark.skipif(not checked_version_installed("textual"), reason="Pilot as checked")
async def test_a_pause_on_an_idle_screen_waits_on_the_app_and_the_screen_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = ManyWidgets()
    async with app.run_test() as pilot:
        for _ in range(3):  # the first layout's Resize events handled, whenever it comes
            await pilot.pause()
        called: list[MessagePump] = []
        call_later = MessagePump.call_later

        def counted(node: MessagePump, *args: Any, **kwargs: Any) -> bool:
            called.append(node)
            return call_later(node, *args, **kwargs)

        monkeypatch.setattr(MessagePump, "call_later", counted)
        await pilot.pause()
        assert called == [app, app.screen], f"{len(called)} waited on, of 63 idle"
