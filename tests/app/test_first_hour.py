"""What a new user meets in the first hour: Settings and back, dialogs that say it all, the
local runtime without a key field, the first key choosing the provider."""

from __future__ import annotations

from textual.widget import Widget
from textual.widgets import OptionList

from byok_tui.screens.settings import SettingsScreen
from byok_tui.widgets.key_field import KeyField
from tests.support.keys import FAKE_KEYS
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    chat,
    make_app,
    settle,
    type_into,
    wait_for,
)


def provider_row(app, provider_id: str) -> str:  # type: ignore[no-untyped-def]
    providers = chat(app).query_one("#providers", OptionList)
    option = providers.get_option(f"provider:{provider_id}")
    return str(option.prompt)


async def test_after_settings_the_title_and_the_sidebar_show_the_key_just_added() -> None:
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        assert "no key" in provider_row(app, "openai")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen))
        assert app.sub_title == "Settings"
        field = app.screen.query_one("#row-openai KeyField", KeyField)
        await type_into(pilot, field, FAKE_KEYS["openai"])
        await pilot.press("escape")
        await settle(pilot)
        assert app.sub_title != "Settings"
        assert "key set" in provider_row(app, "openai")


async def test_a_confirmation_shows_its_whole_question_in_good_english() -> None:
    from textual.widgets import Label

    from byok_tui.screens.dialogs import ConfirmDialog
    from tests.support.pilot import send

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await send(pilot, f"is {FAKE_KEYS['openai']} right?")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.pause()
        question = app.screen.query_one(Label)
        text = str(question.render())
        assert "something shaped like an OpenAI key" in text
        assert text.rstrip().endswith("Send it anyway?")
        # Every word of it is on screen: wrapped inside the dialog, not cut at its edge.
        box = question.parent
        assert isinstance(box, Widget)
        assert question.region.right <= box.content_region.right
        assert question.region.height > 1


async def test_sending_one_of_your_keys_anyway_says_how_it_is_kept_and_sent_later() -> None:
    from textual.widgets import Label

    from byok_tui.core.paths import app_paths
    from byok_tui.keys import entry_name, open_key_store
    from byok_tui.screens.dialogs import ConfirmDialog
    from tests.support.pilot import send

    odd = "my-own-gateway-key-0123456789"  # one of the user's keys, of no known shape
    open_key_store(app_paths()).set(entry_name("openai"), odd)
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 30)) as pilot:
        await settle(pilot)
        await send(pilot, f"why does {odd} fail?")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        question = str(app.screen.query_one(Label).render())
        assert "one of your API keys" in question
        assert "replaced by [REDACTED]" in question
        assert "later messages in this conversation send it that way" in question


async def test_a_title_in_a_dialog_is_shown_as_text_never_run() -> None:
    from textual.widgets import Label

    from byok_tui.app_services.services import open_services, open_store
    from byok_tui.screens.dialogs import ConfirmDialog

    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    store.create_conversation(bot.id, "[@click=app.quit]Quit[/] [b]bold[/b]")
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 30)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+delete")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        question = app.screen.query_one(Label)
        assert "[@click=app.quit]Quit[/] [b]bold[/b]" in str(question.render())
        await pilot.click(question)
        await pilot.pause()
        assert app.is_running


async def test_the_local_runtime_has_no_key_field_and_no_key_entry() -> None:
    from byok_tui.app_services.services import open_services, open_store
    from byok_tui.core.paths import app_paths
    from byok_tui.keys import open_key_store
    from byok_tui.widgets.config_pane import ConfigPane

    store = open_store(open_services())
    store.default_bot("ollama", "llama3.2")
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        pane = chat(app).query_one(ConfigPane)
        assert not any(field.display and field.region.height for field in pane.query(KeyField))
        assert "local runtime, no key" in str(pane.query_one("#key-in-use").render())
        # Even a field reached anyway (it is hidden) stores nothing for the local runtime.
        for field in pane.query(KeyField):
            await type_into(pilot, field, "typed-into-a-hidden-field-123")
        await settle(pilot)
        app.context.writer.wait_idle()
    assert open_key_store(app_paths()).get("app-apikey-ollama") is None
    assert not store.bots()[0].has_key


async def test_the_first_key_added_becomes_the_default_bots_provider() -> None:
    from tests.support.pilot import replies, send, state
    from tests.support.provider_server import openai_reply, provider_server

    with provider_server() as server:
        server.reply_with(openai_reply("hello from OpenAI"))
        app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
            await settle(pilot)
            assert state(app).bot.config.provider == "google"  # free tier: where to start
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen))
            field = app.screen.query_one("#row-openai KeyField", KeyField)
            await type_into(pilot, field, FAKE_KEYS["openai"])
            await pilot.press("escape")
            await settle(pilot)
            bot = state(app).bot
            assert (bot.name, bot.config.provider) == ("Default", "openai")
            await send(pilot, "hi")
            await wait_for(pilot, lambda: replies(app) == ["hello from OpenAI"])
    assert len(server.requests) == 1


async def test_a_message_sent_before_any_key_does_not_tie_the_default_bot_to_its_provider() -> None:
    """A new user types first: no key, so the reply is an error. The first key added still
    becomes the Default bot's provider (nothing was answered yet), and ctrl+r sends there."""
    from tests.support.pilot import error_texts, replies, send, state
    from tests.support.provider_server import openai_reply, provider_server

    with provider_server() as server:
        server.reply_with(openai_reply("hello from OpenAI"))
        app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
            await settle(pilot)
            await send(pilot, "hi")
            await wait_for(pilot, lambda: bool(error_texts(app)))
            assert "No API key for Google Gemini" in error_texts(app)[0]
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen))
            field = app.screen.query_one("#row-openai KeyField", KeyField)
            await type_into(pilot, field, FAKE_KEYS["openai"])
            await pilot.press("escape")
            await settle(pilot)
            assert state(app).bot.config.provider == "openai"
            await pilot.press("ctrl+r")
            await wait_for(pilot, lambda: replies(app)[-1:] == ["hello from OpenAI"])
    assert len(server.requests) == 1


async def test_a_default_bot_already_in_use_keeps_its_provider_when_a_key_is_added() -> None:
    from byok_tui.app_services.services import open_services, open_store
    from byok_tui.core.paths import app_paths
    from byok_tui.keys import entry_name, open_key_store
    from tests.support.pilot import state

    store = open_store(open_services())
    bot = store.default_bot("google", "gemini-3.8-flash")
    earlier = store.create_conversation(bot.id, "an earlier chat")
    store.add_message(earlier.id, "user", "hi")
    store.add_message(earlier.id, "assistant", "hello", provider="google", key_source="global")
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        open_key_store(app_paths()).set(entry_name("openai"), FAKE_KEYS["openai"])
        chat(app).refresh_keys()
        await settle(pilot)
        assert state(app).bot.config.provider == "google"


async def test_a_restart_reopens_the_bot_and_conversation_last_used() -> None:
    from byok_tui.app_services.services import open_services, open_store
    from byok_tui.core.records import BotConfig
    from tests.support.pilot import choose, state, user_messages

    store = open_store(open_services())
    store.default_bot("google", "gemini-3.8-flash")
    writer = store.create_bot(BotConfig("Writer", "openai", "gpt-5.5"))
    older = store.create_conversation(writer.id, "Older")
    store.add_message(older.id, "user", "in the older one")
    store.create_conversation(writer.id, "Newer")
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        assert state(app).bot.name == "Default"
        await choose(pilot, "#bots", f"bot:{writer.id}")
        await choose(pilot, "#conversations", f"conv:{older.id}")
        await pilot.press("ctrl+q")
    again = make_app()
    async with again.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        opened = state(again)
        assert opened.bot.name == "Writer"
        assert opened.conversation is not None and opened.conversation.title == "Older"
        assert user_messages(again) == ["in the older one"]


async def test_with_no_key_the_empty_screen_says_how_to_add_one() -> None:
    from byok_tui.widgets.transcript import Transcript

    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        shown = str(chat(app).query_one(Transcript).query_one(".empty").render())
        assert "ctrl+s" in shown and "Google Gemini" in shown


async def test_text_typed_while_the_sidebar_has_focus_goes_to_the_composer() -> None:
    from byok_tui.widgets.composer import Composer

    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        chat(app).query_one("#providers", OptionList).focus()
        await pilot.pause()
        await pilot.press("h", "e", "y", "space", "y", "o", "u")
        composer = chat(app).query_one(Composer)
        assert composer.text == "hey you"
        assert composer.has_focus
