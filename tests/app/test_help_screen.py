"""F1, or ? anywhere but in a text field, shows every key by where it works; the palette's
'Keys' entry opens the same screen instead of Textual's text-editing key list."""

from __future__ import annotations

import io

from rich.console import Console
from textual.widgets import OptionList, Static

from byok_tui.core.bindings import APP_KEYS, BOT_COMMANDS, CHAT_KEYS, COMPOSER_KEYS, SIDEBAR_KEYS
from byok_tui.screens.help import HelpScreen
from byok_tui.widgets.composer import Composer
from tests.support.pilot import WIDTH_WITHOUT_CONFIG_PANE, chat, make_app, settle, wait_for


def shown_text(app) -> str:  # type: ignore[no-untyped-def]
    """Every text the help screen holds, tables included, as plain text (scrolled or not)."""
    console = Console(width=200, record=True, file=io.StringIO())
    for widget in app.screen.query(Static):
        console.print(widget.content)
    return console.export_text()


async def test_f1_lists_every_binding_by_area_and_escape_closes_it() -> None:
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        text = shown_text(app)
        for area in ("Anywhere", "Chat", "Message", "Sidebar", "Command palette", "Mouse"):
            assert area in text, area
        for key in (*APP_KEYS, *CHAT_KEYS, *COMPOSER_KEYS, *SIDEBAR_KEYS, *BOT_COMMANDS):
            assert key.does in text, key.does
            assert key.spoken in text
        for key in BOT_COMMANDS:  # no key of their own: the name typed in the palette
            assert key.description in text, key.description
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen))


async def test_question_mark_opens_help_outside_the_composer_and_types_in_it() -> None:
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        composer = chat(app).query_one(Composer)
        composer.focus()
        await pilot.press("question_mark")
        assert composer.text == "?"
        assert not isinstance(app.screen, HelpScreen)
        chat(app).query_one("#providers", OptionList).focus()
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))


async def test_the_palettes_keys_entry_is_this_help() -> None:
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        commands = list(app.get_system_commands(app.screen))
        keys = [c for c in commands if c.title in ("Keys", "Help")]
        assert [c.title for c in keys] == ["Help"]
        assert "every key" in keys[0].help.lower()


async def test_ctrl_c_says_how_to_quit_in_words_not_markup() -> None:
    from tests.support.pilot import make_app, settle

    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+c")
        await pilot.pause()
        said = [(n.title, n.message) for n in app._notifications]
        assert ("Do you want to quit?", "Press ctrl+q to quit the app.") in said, said


async def test_the_palette_finds_keys_budgets_and_providers_by_those_words() -> None:
    """The palette matches names only: 'budget', 'key' and 'provider' found nothing, since
    they live in Settings. Each has a name of its own there now."""
    from textual.fuzzy import Matcher

    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for word in ("budget", "key", "provider"):
            matcher = Matcher(word)
            assert any(matcher.match(title) > 0 for title in titles), word
