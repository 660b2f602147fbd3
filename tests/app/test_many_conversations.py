"""A bot with thousands of conversations: the sidebar lists the newest page of them
(CONVERSATIONS_PAGE) and an option that shows a page more, so that opening the app neither
reads nor measures them all."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.widgets import OptionList

from byok_tui.app_services.chat_state import CONVERSATIONS_PAGE as CONVERSATIONS_SHOWN
from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.records import Conversation
from byok_tui.storage.store import Store
from byok_tui.widgets.sidebar import Sidebar
from tests.support.pilot import WIDTH_WITHOUT_CONFIG_PANE, make_app, settle, wait_for


def listed(option_list: OptionList) -> list[str]:
    return [str(option.prompt) for option in option_list.options]


async def test_the_sidebar_lists_the_newest_conversations_and_shows_older_ones_on_demand(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.4-mini")
    for number in range(CONVERSATIONS_SHOWN + 50):
        store.create_conversation(bot.id, f"chat {number}")
    read_at_most: list[int] = []
    read = Store.conversations

    def watched(self: Store, bot_id: int, **page: Any) -> list[Conversation]:
        read_at_most.append(page.get("limit", -1))
        return read(self, bot_id, **page)

    monkeypatch.setattr(Store, "conversations", watched)
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        assert read_at_most and all(0 < limit <= CONVERSATIONS_SHOWN for limit in read_at_most), (
            "opening read every conversation of the bot"
        )
        conversations = app.screen.query_one("#conversations", OptionList)
        shown = listed(conversations)
        assert len(shown) == CONVERSATIONS_SHOWN + 1
        assert shown[0] == f"chat {CONVERSATIONS_SHOWN + 49}", "newest first"
        assert shown[-1] == "Show older conversations\n(50 more)"

        conversations.focus()
        conversations.highlighted = len(shown) - 1
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(listed(conversations)) == CONVERSATIONS_SHOWN + 50)
        assert listed(conversations)[-1] == "chat 0", "no more to show: the option goes"
        highlighted = conversations.highlighted
        assert highlighted is not None
        assert listed(conversations)[highlighted] == "chat 49", "the first of those just shown"


async def test_a_conversation_older_than_the_first_page_is_listed_when_it_is_open() -> None:
    """The conversation open at the last start is listed (and highlighted) however far
    back it is, with every newer one above it."""
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.4-mini")
    made = [store.create_conversation(bot.id, f"chat {n}") for n in range(CONVERSATIONS_SHOWN + 30)]
    store.set_last_opened(bot.id, made[5].id)
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        conversations = app.screen.query_one("#conversations", OptionList)
        shown = listed(conversations)
        assert len(shown) == CONVERSATIONS_SHOWN + 25 + 1, "down to chat 5, then the option"
        assert shown[-2:] == ["chat 5", "Show older conversations\n(5 more)"]
        assert conversations.highlighted == len(shown) - 2


class OneSidebar(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.wanted: list[int] = []

    def compose(self) -> ComposeResult:
        yield Sidebar(id="sidebar")

    def on_sidebar_older_conversations_wanted(
        self, message: Sidebar.OlderConversationsWanted
    ) -> None:
        self.wanted.append(message.last.id)


def conversations_of(bot_id: int, count: int, first_id: int) -> list[Conversation]:
    return [
        Conversation(first_id + n, f"uuid-{first_id + n}", bot_id, f"chat {n}", 0.0, float(-n))
        for n in range(count)
    ]


async def test_a_page_asked_for_one_bot_never_stops_another_bots_older_conversations() -> None:
    """The next page is asked for once however often Show older is pressed; a list shown
    for another bot meanwhile can ask for its own."""
    app = OneSidebar()
    async with app.run_test(size=(60, 30)) as pilot:
        sidebar = app.query_one(Sidebar)
        conversations = app.query_one("#conversations", OptionList)
        for bot_id, first_id in ((1, 100), (2, 200)):
            sidebar.show_conversations(conversations_of(bot_id, 3, first_id), None, older=5)
            await pilot.pause()
            for _ in range(2):
                conversations.highlighted = conversations.option_count - 1
                conversations.action_select()
                await pilot.pause()
        assert app.wanted == [102, 202]


async def test_a_long_title_takes_one_line_of_the_sidebar_cut_with_an_ellipsis() -> None:
    """Each conversation is one row of the list, so that a screenful shows as many as it has
    lines (a 60-character title wrapped to three rows of the 30-column sidebar); one that does
    not fit ends in an ellipsis."""
    long_title = "Explain how server-sent events carry a streamed reply, step by"
    app = OneSidebar()
    async with app.run_test(size=(60, 30)) as pilot:
        sidebar = app.query_one(Sidebar)
        listed_ones = conversations_of(1, 3, 100)
        listed_ones[1] = Conversation(101, "uuid-101", 1, long_title, 0.0, -1.0)
        sidebar.show_conversations(listed_ones, None, older=0)
        await pilot.pause()
        conversations = app.query_one("#conversations", OptionList)
        assert conversations.virtual_size.height == 3, "a row each"
        row = conversations.render_line(1).text.rstrip()
        assert row.startswith("Explain how") and row.endswith("…"), row
        assert len(row) <= conversations.scrollable_content_region.width


async def test_show_older_conversations_shows_how_many_more_whole() -> None:
    """The option that lists older conversations says how many there are, in full, though the
    list's rows are cut to the sidebar's width."""
    app = OneSidebar()
    async with app.run_test(size=(60, 30)) as pilot:
        app.query_one(Sidebar).show_conversations(conversations_of(1, 3, 100), None, older=9_950)
        await pilot.pause()
        conversations = app.query_one("#conversations", OptionList)
        rows = [
            conversations.render_line(y).text.strip()
            for y in range(conversations.virtual_size.height)
        ]
        assert rows[3:] == ["Show older conversations", "(9,950 more)"], rows


async def test_a_long_list_scrolls_by_itself_and_search_and_settings_stay_in_view() -> None:
    """With more conversations than the sidebar has rows, the list takes the rows left and
    scrolls within them; the sidebar itself does not scroll (one scrollbar, not two), and
    Search and Settings stay in view below the list."""
    app = OneSidebar()
    async with app.run_test(size=(60, 40)) as pilot:
        sidebar = app.query_one(Sidebar)
        sidebar.show_conversations(conversations_of(1, 50, 100), None, older=9_950)
        await pilot.pause()
        conversations = app.query_one("#conversations", OptionList)
        assert sidebar.max_scroll_y == 0, "the sidebar scrolls as well as its list"
        assert conversations.max_scroll_y > 0
        for button in ("#open-search", "#open-settings"):
            assert sidebar.region.contains_region(app.query_one(button).region), button


async def test_on_a_short_terminal_the_list_keeps_a_few_rows() -> None:
    """Too short for all of the sidebar, the list still shows five conversations, and the
    sidebar scrolls to what is below it."""
    app = OneSidebar()
    async with app.run_test(size=(60, 12)) as pilot:
        sidebar = app.query_one(Sidebar)
        sidebar.show_conversations(conversations_of(1, 50, 100), None, older=0)
        await pilot.pause()
        assert app.query_one("#conversations", OptionList).size.height >= 5
        assert sidebar.max_scroll_y > 0
