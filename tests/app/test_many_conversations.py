"""A bot with thousands of conversations: the sidebar lists the newest 200 and an option that
shows 200 more, so that opening the app does not measure them all."""

from __future__ import annotations

from textual.widgets import OptionList

from byok_tui.services import open_services, open_store
from byok_tui.widgets.sidebar import CONVERSATIONS_SHOWN
from tests.support.pilot import make_app, settle, wait_for


def listed(option_list: OptionList) -> list[str]:
    return [str(option.prompt) for option in option_list.options]


async def test_the_sidebar_lists_the_newest_conversations_and_shows_older_ones_on_demand() -> None:
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.4-mini")
    for number in range(CONVERSATIONS_SHOWN + 50):
        store.create_conversation(bot.id, f"chat {number}")
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        conversations = app.screen.query_one("#conversations", OptionList)
        shown = listed(conversations)
        assert len(shown) == CONVERSATIONS_SHOWN + 1
        assert shown[0] == f"chat {CONVERSATIONS_SHOWN + 49}", "newest first"
        assert shown[-1] == "Show older conversations (50 more)"

        conversations.focus()
        conversations.highlighted = len(shown) - 1
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(listed(conversations)) == CONVERSATIONS_SHOWN + 50)
        assert listed(conversations)[-1] == "chat 0", "no more to show: the option goes"
        highlighted = conversations.highlighted
        assert highlighted is not None
        assert listed(conversations)[highlighted] == "chat 49", "the first of those just shown"
