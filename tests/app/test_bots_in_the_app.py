"""Bots are made, renamed and deleted in the app (sidebar and palette), with the config pane as
their editor: no shell needed."""

from __future__ import annotations

from textual.widgets import Input, OptionList, Static

from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.records import BotConfig
from byok_tui.screens.dialogs import ConfirmDialog, TextDialog
from byok_tui.storage.store import Store
from byok_tui.widgets.config_pane import ConfigPane
from tests.support.pilot import WIDTH_WITHOUT_CONFIG_PANE, chat, make_app, settle, state, wait_for


def bot_rows(app) -> list[str]:  # type: ignore[no-untyped-def]
    bots = chat(app).query_one("#bots", OptionList)
    return [
        str(bots.get_option_at_index(i).prompt).split("  ")[0] for i in range(bots.option_count)
    ]


def saved_names(store: Store) -> list[str]:
    return sorted(bot.name for bot in store.bots())


async def test_a_new_bot_from_the_sidebar_opens_in_its_editor() -> None:
    store = open_store(open_services())
    store.default_bot("openai", "gpt-5.5")
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.click("#new-bot")
        await wait_for(pilot, lambda: isinstance(app.screen, TextDialog))
        app.screen.query_one(Input).value = "Reviewer"
        await pilot.press("enter")
        await wait_for(pilot, lambda: state(app).bot.name == "Reviewer")
        await settle(pilot)
        assert bot_rows(app) == ["Default", "Reviewer"]
        pane = chat(app).query_one(ConfigPane)
        assert pane.display and pane.query_one("#bot-name", Input).has_focus
        assert (state(app).bot.config.provider, state(app).bot.config.model) == (
            "openai",
            "gpt-5.5",
        )
    assert saved_names(store) == ["Default", "Reviewer"]


async def test_a_new_bot_in_a_narrow_terminal_opens_its_editor_made_then() -> None:
    """At 80 columns the config pane is not made at start; a new bot makes it, shown, with
    the focus at the bot's name."""
    open_store(open_services()).default_bot("openai", "gpt-5.5")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: chat(app).started)
        assert not chat(app).query(ConfigPane)
        chat(app).action_new_bot()
        await wait_for(pilot, lambda: isinstance(app.screen, TextDialog) and app.screen.is_mounted)
        await wait_for(pilot, lambda: bool(app.screen.query(Input)))
        app.screen.query_one(Input).value = "Narrow"
        await pilot.press("enter")
        await wait_for(pilot, lambda: state(app).bot.name == "Narrow")
        name = chat(app).query_one("#bot-name", Input)
        await wait_for(pilot, lambda: name.has_focus and name.value == "Narrow")
        assert chat(app).query_one(ConfigPane).display


async def test_a_taken_name_for_a_new_bot_is_said_in_the_dialog_which_stays_open() -> None:
    """The dialog closed and a toast said the name was taken: the name had to be typed again.
    It now stays open with the message under the field and what was typed kept."""
    store = open_store(open_services())
    store.default_bot("openai", "gpt-5.5")
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.click("#new-bot")
        await wait_for(pilot, lambda: isinstance(app.screen, TextDialog))
        app.screen.query_one(Input).value = "Default"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, TextDialog)
        said = str(app.screen.query_one("#problem", Static).render())
        assert "A bot named 'Default' exists already" in said
        assert app.screen.query_one(Input).value == "Default"
        app.screen.query_one(Input).value = "Second"
        await pilot.press("enter")
        await wait_for(pilot, lambda: state(app).bot.name == "Second")
    assert saved_names(store) == ["Default", "Second"]


async def test_renaming_a_bot_in_its_editor_shows_at_once_and_refuses_a_taken_name() -> None:
    store = open_store(open_services())
    store.default_bot("openai", "gpt-5.5")
    store.create_bot(BotConfig("Writer", "openai", "gpt-5.5"))
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        name = chat(app).query_one("#bot-name", Input)
        name.value = "Helper"
        await settle(pilot)
        assert bot_rows(app) == ["Helper", "Writer"]
        assert "Helper" in app.sub_title
        name.value = "Writer"  # another bot's name
        await settle(pilot)
        warning = str(chat(app).query_one("#bot-name-warning", Static).render())
        assert "Another bot is named 'Writer'" in warning
        name.value = "Default"  # and back again: saved, though it was the first name
        await settle(pilot)
        app.context.writer.wait_idle()
        assert saved_names(store) == ["Default", "Writer"]
        assert bot_rows(app) == ["Default", "Writer"]


async def test_deleting_a_bot_from_the_palette_asks_then_opens_another() -> None:
    store = open_store(open_services())
    default = store.default_bot("openai", "gpt-5.5")
    doomed = store.create_bot(BotConfig("Doomed", "openai", "gpt-5.5"))
    store.create_conversation(doomed.id, "will go too")
    store.set_last_opened(doomed.id, None)
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        assert state(app).bot.name == "Doomed"
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Delete bot")
        await pilot.pause(0.3)  # the palette searches in the background
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.pause()
        await pilot.click("#yes")
        await wait_for(pilot, lambda: state(app).bot.id == default.id)
        await settle(pilot)
        assert bot_rows(app) == ["Default"]
    assert saved_names(store) == ["Default"]
    assert store.conversations(doomed.id) == []


async def test_the_delete_key_on_a_highlighted_bot_asks_and_cancel_keeps_it() -> None:
    store = open_store(open_services())
    store.default_bot("openai", "gpt-5.5")
    kept = store.create_bot(BotConfig("Kept", "openai", "gpt-5.5"))
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        bots = chat(app).query_one("#bots", OptionList)
        bots.focus()
        bots.highlighted = bots.get_option_index(f"bot:{kept.id}")
        await pilot.press("delete")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.pause()
        assert "“Kept”" in str(app.screen.query_one("Label").render())
        await pilot.press("escape")
        await settle(pilot)
        assert bot_rows(app) == ["Default", "Kept"]
    assert saved_names(store) == ["Default", "Kept"]


async def test_the_delete_key_on_a_highlighted_conversation_deletes_that_one() -> None:
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    older = store.create_conversation(bot.id, "Older")
    store.create_conversation(bot.id, "Newer")
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        conversations = chat(app).query_one("#conversations", OptionList)
        conversations.focus()
        conversations.highlighted = conversations.get_option_index(f"conv:{older.id}")
        await pilot.press("delete")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.pause()
        await pilot.click("#yes")
        await settle(pilot)
        opened = state(app).conversation
        assert opened is not None and opened.title == "Newer"  # the one on screen stays
    assert [c.title for c in store.conversations(bot.id)] == ["Newer"]


async def test_a_model_id_typed_in_the_editor_is_saved_and_a_cancelled_one_changes_nothing() -> (
    None
):
    """The model list's "type a model id" asks for one: typed, the bot uses it (saved at once);
    cancelled (Escape), the model stays the one chosen before."""
    from textual.widgets import Select

    from byok_tui.widgets.config_pane import TYPE_A_MODEL_ID

    store = open_store(open_services())
    store.default_bot("openai", "gpt-5.5")
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        models = chat(app).query_one("#bot-model", Select)
        models.value = TYPE_A_MODEL_ID
        await wait_for(pilot, lambda: isinstance(app.screen, TextDialog))
        await pilot.press("escape")
        await settle(pilot)
        assert models.value == "gpt-5.5" and state(app).bot.config.model == "gpt-5.5"
        models.value = TYPE_A_MODEL_ID
        await wait_for(pilot, lambda: isinstance(app.screen, TextDialog))
        app.screen.query_one(Input).value = "gpt-5.5-preview-0601"
        await pilot.press("enter")
        await wait_for(pilot, lambda: state(app).bot.config.model == "gpt-5.5-preview-0601")
        app.context.writer.wait_idle()
    assert store.bot("Default").config.model == "gpt-5.5-preview-0601"
