"""Edit and regenerate in the app: the earlier message or reply is kept as an alternative
(its place, `2/2`, under it), ← and → (or a click) switch, and what is sent is the branch on
screen."""

from __future__ import annotations

from byok_tui.widgets.composer import Composer
from byok_tui.widgets.message_views import Alternatives, ReplyView, UserMessage
from tests.support.fake_backend import FakeProviders
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    app_answered_by,
    chat,
    replies,
    replying,
    send,
    settle,
    user_messages,
    wait_for,
)
from tests.support.stored import one_exchange

KEY = "sk-proj-" + "B" * 60


def a_conversation() -> FakeProviders:
    one_exchange(KEY, "Branches")
    return FakeProviders()


def notices(app: object) -> list[str]:
    return [str(n.message) for n in app._notifications]  # type: ignore[attr-defined]


def markers(app: object) -> list[str]:
    return [str(m.render()) for m in app.screen.query(Alternatives)]  # type: ignore[attr-defined]


async def test_ctrl_g_answers_again_and_the_first_answer_stays_one_key_away() -> None:
    fake = a_conversation()
    fake.enqueue("A2")
    fake.enqueue("after A1")
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: replies(app) == ["A2"] and markers(app) == ["‹ 2/2 ›"])
        assert fake.requests[0].texts == ["Q1"]  # the question, not the earlier answer
        assert user_messages(app) == ["Q1"]

        reply = app.screen.query_one(ReplyView)
        reply.focus()
        await pilot.press("left")
        await wait_for(pilot, lambda: replies(app) == ["A1"] and markers(app) == ["‹ 1/2 ›"])
        await pilot.press("left")  # nothing before the first: said, nothing changes
        await wait_for(pilot, lambda: "No alternative before this one." in notices(app))
        assert replies(app) == ["A1"]

        await send(pilot, "Q2")
        await wait_for(pilot, lambda: replies(app)[-1:] == ["after A1"])
        assert fake.requests[1].texts == ["Q1", "A1", "Q2"]  # the branch on screen


async def test_e_on_a_message_edits_it_and_sends_it_as_an_alternative() -> None:
    fake = a_conversation()
    fake.enqueue("answer to the edit")
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        question = app.screen.query_one(UserMessage)
        question.focus()
        await pilot.press("e")
        composer = chat(app).query_one(Composer)
        assert composer.text == "Q1" and "Editing a message" in str(composer.border_title)
        composer.text = "Q1, said better"
        await pilot.press("enter")
        await wait_for(pilot, lambda: replies(app) == ["answer to the edit"])
        await wait_for(pilot, lambda: markers(app) == ["‹ 2/2 ›"])
        assert user_messages(app) == ["Q1, said better"]
        assert fake.requests[0].texts == ["Q1, said better"]
        assert "Editing" not in str(composer.border_title)

        clicked = app.screen.query_one(Alternatives)
        await pilot.click(clicked, offset=(0, 0))  # the left half: the one before
        await wait_for(pilot, lambda: user_messages(app) == ["Q1"] and replies(app) == ["A1"])


async def test_escape_leaves_an_edit_and_gives_back_the_draft() -> None:
    fake = a_conversation()
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        composer = chat(app).query_one(Composer)
        composer.text = "a draft of mine"
        await app.screen.run_action("edit_last")
        assert composer.text == "Q1"
        await pilot.press("escape")
        assert composer.text == "a draft of mine"
        assert "Editing" not in str(composer.border_title)
        assert fake.requests == []


async def test_a_reply_just_streamed_is_the_one_ctrl_g_answers_again() -> None:
    """Not the reply before it: a message and reply sent in this session are as editable
    and regenerable as those read from the database."""
    fake = a_conversation()
    fake.enqueue("A2")
    fake.enqueue("A2, again")
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "Q2")
        await wait_for(pilot, lambda: replies(app) == ["A1", "A2"] and not replying(app))
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: replies(app) == ["A1", "A2, again"])
        assert fake.requests[1].texts == ["Q1", "A1", "Q2"]
        just_sent = app.screen.query(UserMessage).last()
        assert just_sent.message_text == "Q2" and just_sent.message_id is not None


async def test_r_on_a_focused_reply_keeps_the_focus_on_the_new_answer_so_left_browses() -> None:
    fake = a_conversation()
    fake.enqueue("A2")
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        app.screen.query_one(ReplyView).focus()
        await pilot.press("r")
        await wait_for(pilot, lambda: replies(app) == ["A2"] and markers(app) == ["‹ 2/2 ›"])
        await settle(pilot)
        assert isinstance(app.screen.focused, ReplyView), app.screen.focused
        await pilot.press("left")
        await wait_for(pilot, lambda: replies(app) == ["A1"] and markers(app) == ["‹ 1/2 ›"])
