"""While a reply's words arrive, they are what moves on screen: the activity line's dots and
the composer's cursor hold still (each of their steps was a frame of its own, some fifty in a
ten-second reply). They move again once the words stop coming: the dots then say the reply is
still awaited, and the cursor blinks as it did."""

from __future__ import annotations

from byok_tui.app import ByokApp
from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.screens.chat_column import ChatColumn
from byok_tui.widgets.activity_line import ActivityLine
from byok_tui.widgets.composer import Composer
from tests.support.fake_backend import FakeProviders
from tests.support.pilot import (
    FakeClock,
    app_answered_by,
    chat,
    replies,
    replying,
    send,
    settle,
    wait_for,
)


def blinking(composer: Composer) -> bool:
    return composer.cursor_blink


def app_replying(*, finish: bool) -> tuple[ByokApp, FakeClock]:
    """The app with a key, its reply "Words arriving" queued, and a clock moved by hand."""
    open_key_store(app_paths()).set(entry_name("openai"), "sk-proj-" + "K" * 60)
    fake = FakeProviders()
    fake.enqueue("Words ", "arriving", pause=0.05, finish=finish)
    app = app_answered_by(fake)
    app.clock = clock = FakeClock()
    return app, clock


async def test_dots_and_cursor_hold_still_while_words_arrive_and_move_once_they_stop() -> None:
    app, clock = app_replying(finish=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        column = chat(app).query_one(ChatColumn)
        activity = column.query_one(ActivityLine)
        composer = column.query_one(Composer)
        assert blinking(composer)
        await send(pilot, "Tell me")
        await wait_for(pilot, lambda: replies(app) == ["Words arriving"])

        redrawn = 0
        real_refresh = activity.refresh

        def counted_refresh(*args: object, **kwargs: object) -> object:
            nonlocal redrawn
            redrawn += 1
            return real_refresh(*args, **kwargs)  # type: ignore[arg-type]

        activity.refresh = counted_refresh  # type: ignore[method-assign, assignment]
        column._tick_activity()
        said = str(activity.render())
        redrawn = 0
        for _ in range(3):  # the words came just now: three ticks of a live reply
            clock.advance(0.25)
            column._tick_activity()
        assert str(activity.render()) == said and "Reply on its way" in said
        assert redrawn == 0, "the activity line was drawn again while the words arrived"
        assert not blinking(composer), "the cursor blinked while the words arrived"

        clock.advance(2)  # the words stopped coming: the reply is still awaited
        shown = set()
        for _ in range(3):
            column._tick_activity()
            shown.add(str(activity.render()))
            clock.advance(0.5)
        assert len(shown) == 3, "the dots stood still while the reply was awaited"
        assert blinking(composer)

        await pilot.press("escape")
        await wait_for(pilot, lambda: not replying(app))
        assert blinking(composer)


async def test_a_cursor_set_not_to_blink_stays_so_after_a_reply() -> None:
    """Only a blink the reply stopped is given back."""
    app, clock = app_replying(finish=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        column = chat(app).query_one(ChatColumn)
        composer = column.query_one(Composer)
        composer.cursor_blink = False
        await send(pilot, "Tell me")
        await wait_for(pilot, lambda: not replying(app) and replies(app) == ["Words arriving"])
        for _ in range(4):
            clock.advance(0.5)
            column._tick_activity()
        assert not blinking(composer)
