"""The sidebar under the mouse: a click picks the row that was under the pointer, even though
the press gives the list the focus before the release."""

from __future__ import annotations

from textual.widgets import OptionList

from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.registry import provider_ids
from tests.support.pilot import WIDTH_WITHOUT_CONFIG_PANE, chat, make_app, settle, state


async def click_row(pilot, option_list: OptionList, index: int) -> None:  # type: ignore[no-untyped-def]
    """Press on row `index` as it is drawn now, wait as a hand does, then release there."""
    region = option_list.content_region
    at = (region.x + 2, region.y + index - round(option_list.scroll_y))
    await pilot.mouse_down(offset=at)
    await pilot.pause(0.15)
    await pilot.click(offset=at)
    await settle(pilot)


async def test_clicking_a_provider_row_picks_that_provider_for_every_row() -> None:
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 50)) as pilot:
        await settle(pilot)
        for index, provider_id in enumerate(provider_ids()):
            providers = chat(app).query_one("#providers", OptionList)
            providers.blur()
            await pilot.pause()
            await click_row(pilot, providers, index)
            assert state(app).bot.config.provider == provider_id, f"clicked row {index}"


async def test_clicking_a_conversation_row_opens_that_conversation() -> None:
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    titles = [f"Conversation {n}" for n in range(5)]
    for title in titles:
        store.create_conversation(bot.id, title)
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 50)) as pilot:
        await settle(pilot)
        for index, title in enumerate(reversed(titles)):  # newest first
            conversations = chat(app).query_one("#conversations", OptionList)
            conversations.blur()
            await pilot.pause()
            await click_row(pilot, conversations, index)
            opened = state(app).conversation
            assert opened is not None and opened.title == title, f"clicked row {index}"
