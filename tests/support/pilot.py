"""Helpers for driving the app with Pilot against loopback provider servers (used by the
app tests and by scripts that run the app in a process of its own)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable

from textual.app import App
from textual.css.query import NoMatches
from textual.geometry import Offset
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Input, OptionList
from textual.worker import WorkerCancelled

from byok_tui.app import ByokApp, build_app
from byok_tui.app_services.chat_state import ChatState
from byok_tui.app_services.services import Backend
from byok_tui.screens.chat import ChatScreen
from byok_tui.screens.chat_column import ChatColumn
from byok_tui.screens.side_panes import NARROW
from byok_tui.widgets.composer import Composer
from byok_tui.widgets.key_field import KeyField
from byok_tui.widgets.message_views import ErrorBlock, ReplyView, UserMessage
from byok_tui.widgets.transcript import Transcript

CLOSED_PORT = "127.0.0.1:9"  # nothing listens: the local runtime shows as not running

# The widest terminal in which the chat screen starts with its config pane hidden, and so never
# makes it. The pane is 48 of the chat screen's 80 widgets, and every layout, restyle and frame
# walks them: a test at 140 columns took ~1.3x the CPU of the same test here (up to 1.9x).
# Tests whose subject is not the pane, nor start-up, layout or a promise about what the screen
# shows, run at this width; the others keep the pane.
WIDTH_WITHOUT_CONFIG_PANE = NARROW - 1


def make_app(**env: str) -> ByokApp:
    return build_app({**os.environ, "OLLAMA_HOST": CLOSED_PORT, **env})


def app_answered_by(backend: Backend, **env: str) -> ByokApp:
    """The app, its providers answered without a socket (tests/support/fake_backend.py)."""
    return build_app({**os.environ, "OLLAMA_HOST": CLOSED_PORT, **env}, backend)


async def settle(pilot: Pilot[None]) -> None:
    """Wait until the chat screen has replaced the start screen and shown its state."""
    await wait_for(pilot, lambda: any(_mounted_chat(s) for s in pilot.app.screen_stack))
    await workers_done(pilot.app)
    await pilot.pause()


async def answer_yes(pilot: Pilot[None]) -> None:
    """Answer Yes, with the keyboard, in the confirmation dialog that is opening. The dialog
    puts the focus on its safe answer (No) as it mounts: Yes is focused once it has, and
    Enter pressed then. Focused before that, Yes lost the focus to No and Enter cancelled."""
    from byok_tui.screens.dialogs import ConfirmDialog

    app = pilot.app

    def focused(button_id: str) -> bool:
        return isinstance(app.screen, ConfirmDialog) and getattr(app.focused, "id", None) == (
            button_id
        )

    await wait_for(pilot, lambda: focused("no"))
    app.screen.query_one("#yes").focus()
    await wait_for(pilot, lambda: focused("yes"))
    await pilot.press("enter")


async def settings_opened(pilot: Pilot[None]) -> None:
    """The chat screen settled, then Settings opened from it (ctrl+s) and settled."""
    await settle(pilot)
    await pilot.press("ctrl+s")
    await settle(pilot)


async def workers_done(app: App[None]) -> None:
    """Wait until no worker is running. A cancelled worker counts as done: an exclusive worker
    is cancelled when a newer one of its group starts (waiting on it would raise)."""
    while running := [worker for worker in app.workers if worker.is_running]:
        for worker in running:
            with contextlib.suppress(WorkerCancelled):
                await worker.wait()


def _mounted_chat(screen: object) -> bool:
    """Mounted, and what it opens on shown (a message, not a worker, brings the first)."""
    return isinstance(screen, ChatScreen) and screen.is_mounted and screen.column.is_open


async def wait_for(pilot: Pilot[None], check: Callable[[], bool], timeout: float = 10) -> None:
    """Wait until `check()` holds; a widget it reads that is not mounted yet is a "not yet".

    Checked every 10 ms between sleeps. A Pilot pause at each check (every widget of the
    screen sent a message, a frame drawn) cost ~0.5 s of CPU a second of waiting, and the
    longer a loaded machine made a test wait, the more CPU it took. Once `check()` holds, a
    pause lets the app catch up, and it must hold after it, as it held after a pause before."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    if _holds(check):
        return
    while True:
        if loop.time() > deadline:
            raise AssertionError("the app never reached the expected state")
        await asyncio.sleep(0.01)
        if _holds(check):
            await pilot.pause(0.01)  # as each check had it
            if _holds(check):
                return


def _holds(check: Callable[[], bool]) -> bool:
    try:
        return check()
    except NoMatches:
        return False


def state(app: ByokApp) -> ChatState:
    loaded = chat(app).state
    assert loaded is not None
    return loaded


def chat(app: ByokApp) -> ChatScreen:
    """The chat screen, even while a dialog or Settings is on top of it."""
    return next(s for s in app.screen_stack if isinstance(s, ChatScreen))


async def send(pilot: Pilot[None], text: str) -> None:
    composer = pilot.app.screen.query_one(Composer)
    composer.focus()
    composer.text = text
    await pilot.press("enter")


async def type_into(pilot: Pilot[None], field: KeyField, text: str) -> None:
    """Put `text` in a key field as a paste would: one change event."""
    field.query_one(Input).value = text
    await pilot.pause()


async def choose(pilot: Pilot[None], list_id: str, option_id: str) -> None:
    option_list = pilot.app.screen.query_one(list_id, OptionList)
    option_list.focus()
    option_list.highlighted = option_list.get_option_index(option_id)
    await pilot.press("enter")
    await settle(pilot)


def replies(app: ByokApp) -> list[str]:
    return [r.content for r in chat(app).query_one(Transcript).query(ReplyView)]


def user_messages(app: ByokApp) -> list[str]:
    return [m.message_text for m in chat(app).query_one(Transcript).query(UserMessage)]


def error_texts(app: ByokApp) -> list[str]:
    return [str(e.render()) for e in chat(app).query_one(Transcript).query(ErrorBlock)]


async def wheel(pilot: Pilot[None], widget: Widget, *, up: bool = True) -> None:
    """One notch of the mouse wheel over the middle of `widget`, delivered as Pilot delivers
    its own mouse events (Pilot has no wheel of its own)."""
    from textual.events import MouseScrollDown, MouseScrollUp

    region = widget.region
    x, y = region.x + region.width // 2, region.y + region.height // 2
    notch = (MouseScrollUp if up else MouseScrollDown)(
        widget, x, y, 0, -1 if up else 1, 0, False, False, False, screen_x=x, screen_y=y
    )
    pilot.app.mouse_position = Offset(x, y)
    pilot.app.screen._forward_event(notch)
    await pilot.pause()


def replying(app: ByokApp) -> bool:
    """A reply is on its way (or its message waits for the conversation to open)."""
    return chat(app).query_one(ChatColumn).busy


class FakeClock:
    """A clock a test moves on by hand (`app.clock = FakeClock()`): countdowns read it, so a
    test of a 30-second wait takes no 30 seconds."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
