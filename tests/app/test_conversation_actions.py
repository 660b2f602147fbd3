"""The conversation on screen is renamed and deleted from the keyboard (asked first, a new one
takes its place); with none yet, the user is told instead of a dialog opening; a bot moved to
another provider is asked about its own key, which is never sent to the new one."""

from __future__ import annotations

from textual.widgets import Button, Input, OptionList

from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.records import BotConfig
from byok_tui.screens.dialogs import ConfirmDialog, TextDialog
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    chat,
    choose,
    make_app,
    settle,
    state,
    wait_for,
)

BOT_KEY = "sk-proj-" + "B" * 60


def notices(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(notification.message) for notification in app._notifications]


def conversation_rows(app) -> list[str]:  # type: ignore[no-untyped-def]
    rows = chat(app).query_one("#conversations", OptionList)
    return [str(rows.get_option_at_index(i).prompt) for i in range(rows.option_count)]


async def test_f2_renames_the_conversation_on_screen_in_the_sidebar_and_the_store() -> None:
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, "Untitled")
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, TextDialog))
        field = app.screen.query_one(Input)
        assert field.value == "Untitled"  # the title as it is, to edit
        field.value = "Reading files"
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("Reading files" in r for r in conversation_rows(app)))
        opened = state(app).conversation
        assert opened is not None and opened.title == "Reading files"
    assert store.conversation(conversation.id).title == "Reading files"


async def test_deleting_the_conversation_on_screen_asks_then_a_new_one_takes_its_place() -> None:
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    kept = store.create_conversation(bot.id, "Kept")
    doomed = store.create_conversation(bot.id, "Doomed")
    store.add_message(doomed.id, "user", "a question")
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        opened = state(app).conversation
        assert opened is not None and opened.id == doomed.id
        await pilot.press("ctrl+delete")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.pause()
        await pilot.press("escape")  # not yet: nothing is deleted
        await settle(pilot)
        assert [c.id for c in store.conversations(bot.id)] == [doomed.id, kept.id]
        await pilot.press("ctrl+delete")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.pause()
        await pilot.click("#yes")
        await wait_for(pilot, lambda: state(app).conversation is None)
        await settle(pilot)
        assert not any("Doomed" in row for row in conversation_rows(app))
    assert [c.id for c in store.conversations(bot.id)] == [kept.id]


async def test_with_no_conversation_yet_its_actions_say_so_and_open_no_dialog() -> None:
    open_store(open_services()).default_bot("openai", "gpt-5.5")
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        assert state(app).conversation is None
        for key in ("f2", "ctrl+delete"):
            await pilot.press(key)
            await settle(pilot)
            assert app.screen is chat(app)
        chat(app).action_export_markdown()
        await settle(pilot)
        said = notices(app)
        assert said.count("No conversation yet: send a message to start one.") == 2
        assert "No conversation to export yet: send a message first." in said


async def test_a_bot_moved_to_another_provider_is_asked_about_its_own_key() -> None:
    store = open_store(open_services())
    store.default_bot("openai", "gpt-5.5")
    kept = store.create_bot(BotConfig("Kept", "openai", "gpt-5.5"))
    removed = store.create_bot(BotConfig("Removed", "openai", "gpt-5.5"))
    for bot in (kept, removed):
        store.set_bot_key(bot.id, BOT_KEY)
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        for bot, answer in ((kept, "#no"), (removed, "#yes")):
            await choose(pilot, "#bots", f"bot:{bot.id}")
            assert state(app).bot.id == bot.id
            await choose(pilot, "#providers", "provider:anthropic")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
            await pilot.pause()
            question = str(app.screen.query_one("Label").render())
            assert "This bot's own key is for OpenAI: it is never sent to Anthropic" in question
            await pilot.click(answer)
            await settle(pilot)
            assert state(app).bot.config.provider == "anthropic"
        app.context.writer.wait_idle()
    bots = {bot.id: bot for bot in store.bots()}
    assert bots[kept.id].kept_key_for == "openai"  # kept for when it goes back to OpenAI
    assert not bots[removed.id].has_key and bots[removed.id].kept_key_for is None
    assert store.bot_key(kept.id) is None  # and never given for Anthropic


async def test_a_dialog_answered_twice_at_once_acts_once_and_does_not_crash() -> None:
    """Enter pressed twice quickly in a dialog (or Delete clicked twice) reached it twice
    before it closed: Textual then set its answer twice (InvalidStateError, a crash report),
    and the action would have run twice. A dialog answers once."""
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    for title in ("Kept", "Doomed"):
        store.create_conversation(bot.id, title)
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.click("#new-bot")
        await wait_for(pilot, lambda: isinstance(app.screen, TextDialog))
        field = app.screen.query_one(Input)
        field.value = "Reviewer"
        for _ in range(2):  # both queued before the first is handled
            app.screen.post_message(Input.Submitted(field, "Reviewer"))
        await wait_for(pilot, lambda: state(app).bot.name == "Reviewer")
        await settle(pilot)
        await pilot.press("ctrl+delete")  # the open conversation of the new bot: none
        await settle(pilot)
        chat(app).show_chat(bot.id, None)
        await wait_for(pilot, lambda: state(app).bot.id == bot.id)
        await settle(pilot)
        await pilot.press("ctrl+delete")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        yes = app.screen.query_one("#yes", Button)
        for _ in range(2):
            app.screen.post_message(Button.Pressed(yes))
        await settle(pilot)
        assert app.crash_report is None
    assert sorted(b.name for b in store.bots()) == ["Default", "Reviewer"]
    assert [c.title for c in store.conversations(bot.id)] == ["Kept"]
