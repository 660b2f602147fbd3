"""Continue in the app: a reply cut short (stopped with Esc, at the length limit, cut by the
network) offers "Continue ▸ c"; c on the reply, a click, or the palette continues it in
place, and it is complete once the continuation ends."""

from __future__ import annotations

from textual.widgets import Button

from byok_tui.app import ByokApp
from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.widgets.message_views import ReplyView
from tests.support.fake_backend import FakeProviders
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    app_answered_by,
    chat,
    error_texts,
    replies,
    replying,
    send,
    settle,
    wait_for,
)
from tests.support.stored import add_cut_reply

KEY = "sk-proj-" + "C" * 60


def offers(app: ByokApp) -> list[str]:
    """The replies that offer to continue, by their text."""
    return [view.content for view in app.screen.query(ReplyView) if view.query(".continue")]


def the_reply(app: ByokApp) -> ReplyView:
    return app.screen.query(ReplyView).last()


def stored_replies() -> list[tuple[str, str]]:
    store = open_store(open_services())
    [conversation] = store.conversations(store.bots()[0].id)
    return [(m.content, m.status) for m in store.messages(conversation.id) if m.role != "user"]


async def test_a_reply_stopped_with_escape_is_continued_in_place_with_c() -> None:
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    fake = FakeProviders()
    fake.enqueue("The answer ", "is", finish=False)  # open until stopped
    fake.enqueue(" 42.")
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "What is six times seven?")
        # The last characters wait for more (they might begin a key, to be redacted).
        await wait_for(pilot, lambda: replies(app)[0].startswith("The answer"))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not replying(app) and offers(app) == ["The answer is"])
        assert "stopped, partial reply kept" in the_reply(app)._meta
        assert "price unknown (its input was billed)" in the_reply(app)._meta  # no counts came

        the_reply(app).focus()
        await pilot.press("c")
        await wait_for(pilot, lambda: replies(app) == ["The answer is 42."] and not replying(app))
        continued = fake.requests[1].chat
        assert continued.continues
        assert [(m.role, m.content) for m in continued.messages] == [
            ("user", "What is six times seven?"),
            ("assistant", "The answer is"),
        ]
        assert offers(app) == [], "complete now: nothing to continue"
        assert not the_reply(app).has_class("partial")
        assert len(app.screen.query(ReplyView)) == 1, "the same reply grew"
    assert stored_replies() == [("The answer is 42.", "complete")]


async def test_a_reply_at_the_length_limit_offers_to_continue_and_the_palette_continues_it() -> (
    None
):
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    fake = FakeProviders()
    fake.enqueue("Once upon", finish_reason="length")
    fake.enqueue(" a time.")
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "A story")
        await wait_for(pilot, lambda: offers(app) == ["Once upon"] and not replying(app))
        assert "at the length limit, partial reply kept" in the_reply(app)._meta
        assert stored_replies() == [("Once upon", "partial")]

        chat(app).action_continue_last()  # what the palette's "Continue the reply" runs
        await wait_for(pilot, lambda: replies(app) == ["Once upon a time."] and not replying(app))
    assert stored_replies() == [("Once upon a time.", "complete")]


async def test_a_reopened_cut_reply_offers_continue_and_a_click_continues_it() -> None:
    """Only the last reply, and only one cut short, offers it; the error that said why it
    stopped goes once it is continued."""
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, "Cut")
    store.add_message(conversation.id, "user", "Q1")
    store.add_message(conversation.id, "assistant", "A1 whole")
    store.add_message(conversation.id, "user", "Q2")
    add_cut_reply(
        store,
        conversation.id,
        "A2 half",
        error_kind="network",
        error_message="The connection dropped in the middle of the reply. Try again",
    )
    fake = FakeProviders()
    fake.enqueue(" and the rest")
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        assert offers(app) == ["A2 half"]
        assert error_texts(app)
        await pilot.click(the_reply(app).query_one(".continue", Button))
        await wait_for(pilot, lambda: replies(app)[-1] == "A2 half and the rest")
        await wait_for(pilot, lambda: not replying(app))
        assert error_texts(app) == []
        assert fake.requests[0].texts == ["Q1", "A1 whole", "Q2", "A2 half"]


async def test_a_continuation_that_cannot_be_sent_leaves_the_reply_as_it_was() -> None:
    """No key: said under the reply, which keeps its text and its offer."""
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, "Cut")
    store.add_message(conversation.id, "user", "Q1")
    add_cut_reply(store, conversation.id, "Half", error_kind=None, error_message=None)
    fake = FakeProviders()
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        the_reply(app).focus()
        await pilot.press("c")
        await wait_for(pilot, lambda: bool(error_texts(app)) and not replying(app))
        assert "No API key for OpenAI" in error_texts(app)[0]
        assert "Press c on the reply to continue it." in error_texts(app)[0]
        assert offers(app) == ["Half"] and fake.requests == []
    assert stored_replies() == [("Half", "partial")]


async def test_a_complete_reply_offers_no_c_and_c_sends_nothing() -> None:
    """A reply that is whole has nothing to continue: its footer offers no `c` (nor ←/→
    without alternatives), and c sends nothing; the palette's Continue says why."""
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, "Whole")
    store.add_message(conversation.id, "user", "Q1")
    store.add_message(conversation.id, "assistant", "A whole answer.")
    fake = FakeProviders()
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        the_reply(app).focus()
        await pilot.pause()
        offered = {b.binding.action for b in app.active_bindings.values() if b.enabled}
        assert "continue_reply" not in offered and "alternative(-1)" not in offered, offered
        assert "regenerate" in offered
        await pilot.press("c")
        await pilot.pause(0.2)
        assert error_texts(app) == [] and fake.requests == [] and not replying(app)
