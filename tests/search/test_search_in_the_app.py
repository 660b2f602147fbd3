"""ctrl+f searches every conversation from anywhere on the chat screen: live results with
conversation, bot, role and the match marked; Enter opens the conversation at that message,
marked and focused; Escape leaves everything as it was."""

from __future__ import annotations

import asyncio

import pytest
from textual.pilot import Pilot
from textual.widgets import Button, Input, OptionList, Static

from byok_tui.app import ByokApp
from byok_tui.app_services.chat_state import NEWEST_PAGE, PAGE, REVEAL_SPAN
from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.screens.search import SearchScreen
from byok_tui.screens.start import StartScreen
from byok_tui.storage import db, schema
from byok_tui.storage.store import Store
from byok_tui.widgets.message_views import ReplyView, UserMessage
from byok_tui.widgets.transcript import Transcript
from tests.support.fake_backend import FakeProviders
from tests.support.old_database import old_database
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    app_answered_by,
    chat,
    make_app,
    replies,
    send,
    settle,
    wait_for,
    workers_done,
)
from tests.support.stored import add_cut_reply


def two_conversations() -> tuple[Store, int, int]:
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    older = store.create_conversation(bot.id, "Fruit [b]facts[/b]")
    store.add_message(older.id, "user", "Tell me about the kumquat")
    store.add_message(older.id, "assistant", "A kumquat is a small citrus fruit.")
    newer = store.create_conversation(bot.id, "Newer")
    store.add_message(newer.id, "user", "Something else")
    return store, older.id, newer.id


def conversation_open(app: ByokApp) -> int | None:
    state = chat(app).state
    return state.conversation.id if state and state.conversation else None


def hits_shown(screen: object) -> list[str]:
    assert isinstance(screen, SearchScreen)
    option_list = screen.query_one("#search-hits", OptionList)
    options = [option_list.get_option_at_index(n) for n in range(option_list.option_count)]
    return [str(option.prompt) for option in options if option.id is not None]


async def test_ctrl_f_finds_a_message_and_enter_opens_it_marked() -> None:
    _store, older, newer = two_conversations()
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        assert conversation_open(app) == newer
        await pilot.press("ctrl+f")
        search = app.screen
        assert isinstance(search, SearchScreen)
        await pilot.press(*"kumq*")
        await wait_for(pilot, lambda: len(hits_shown(search)) == 2)
        first, second = hits_shown(search)
        assert first.startswith("Fruit [b]facts[/b] · Default · assistant · 20")
        assert first.endswith("A kumquat is a small citrus fruit.")
        assert second.endswith("Tell me about the kumquat")
        assert "2 found" in str(search.query_one("#search-status", Static).render())
        await pilot.press("down", "down", "enter")  # to the list, then the second hit

        await wait_for(pilot, lambda: bool(app.screen.query(".found")))
        assert conversation_open(app) == older
        [found] = app.screen.query(".found")
        assert isinstance(found, UserMessage)
        assert found.message_text == "Tell me about the kumquat"
        assert app.screen.focused is found


async def test_enter_in_the_field_opens_the_newest_hit_and_escape_changes_nothing() -> None:
    _store, older, newer = two_conversations()
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+f", *"citrus")
        await wait_for(pilot, lambda: len(hits_shown(app.screen)) == 1)
        await pilot.press("escape")
        assert not isinstance(app.screen, SearchScreen)
        assert conversation_open(app) == newer

        await pilot.press("ctrl+f")  # the last search is offered again
        assert app.screen.query_one("#search-query", Input).value == "citrus"
        await wait_for(pilot, lambda: len(hits_shown(app.screen)) == 1)
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(app.screen.query(".found")))
        [found] = app.screen.query(".found")
        assert isinstance(found, ReplyView) and "citrus" in found.content
        assert conversation_open(app) == older


async def test_a_hit_far_back_in_a_long_conversation_is_brought_into_view() -> None:
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    long = store.create_conversation(bot.id, "Long")
    for number in range(150):
        text = "the needle is here" if number == 3 else f"message {number}"
        store.add_message(long.id, "user", text)
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await jump_to_the_needle(pilot)
        await pilot.pause(0.2)
        transcript = app.screen.query_one(Transcript)
        [found] = app.screen.query(".found")
        assert transcript.region.contains_region(found.region)  # on screen
        assert transcript.scroll_y < transcript.max_scroll_y  # not snapped back to the end


def showing_the_newest(transcript: Transcript) -> bool:
    return transcript.at_end


FAR = PAGE + REVEAL_SPAN + 400  # messages in a conversation whose 4th holds the needle


async def jump_to_the_needle(pilot: Pilot[None]) -> None:
    """Search for "needle" and open the one hit (marked once it is on screen)."""
    app = pilot.app
    await settle(pilot)
    await pilot.press("ctrl+f", *"needle")
    await wait_for(pilot, lambda: len(hits_shown(app.screen)) == 1)
    await pilot.press("enter")
    await wait_for(pilot, lambda: bool(app.screen.query(".found")))


async def open_the_far_needle(pilot: Pilot[None]) -> Transcript:
    """Search for the needle, open it: the page from it on, a way back to the newest."""
    await jump_to_the_needle(pilot)
    transcript = pilot.app.screen.query_one(Transcript)
    for _ in range(3):  # an earlier page nobody asked for would have come by now
        await workers_done(pilot.app)
        await pilot.pause(0.05)
    shown = [m.message_text for m in transcript.query(UserMessage)]
    assert shown == ["the needle is here", *(f"message {n}" for n in range(4, PAGE + 3))]
    assert not showing_the_newest(transcript)
    assert str(transcript.query(Button).last().label) == "Show the newest messages"
    return transcript


def a_far_needle(cut_at: int | None = None) -> None:
    """A conversation of FAR messages, the 4th holding the needle; with `cut_at`, that one
    is a reply cut short."""
    open_key_store(app_paths()).set(entry_name("openai"), "sk-proj-" + "N" * 60)
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    long = store.create_conversation(bot.id, "Long")
    for number in range(FAR):
        if number == cut_at:
            add_cut_reply(store, long.id, "cut short")
            continue
        text = "the needle is here" if number == 3 else f"message {number}"
        store.add_message(long.id, "user", text)


async def test_a_hit_further_back_than_the_reveal_span_opens_a_page_of_its_own() -> None:
    """Mounting every message after a hit 1,000 messages back would freeze the screen: the
    page from the hit on is shown instead, with a way back to the newest; a message sent from
    there goes under the newest messages, and what is sent is the branch's end."""
    a_far_needle()
    fake = FakeProviders()
    fake.enqueue("the answer")
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        transcript = await open_the_far_needle(pilot)
        await send(pilot, "a new question")
        await wait_for(pilot, lambda: replies(app) == ["the answer"])
        shown = [m.message_text for m in transcript.query(UserMessage)]
        assert shown[-2:] == [f"message {FAR - 1}", "a new question"]
        assert showing_the_newest(transcript)
        assert fake.requests[0].texts[-2:] == [f"message {FAR - 1}", "a new question"]


async def test_the_way_back_shows_the_newest_messages_again() -> None:
    a_far_needle()
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        transcript = await open_the_far_needle(pilot)
        transcript.query(Button).last().press()
        await wait_for(pilot, lambda: showing_the_newest(transcript))
        shown = [m.message_text for m in transcript.query(UserMessage)]
        assert shown[-1] == f"message {FAR - 1}" and len(shown) == NEWEST_PAGE


async def test_a_page_found_far_back_offers_no_continue_for_its_last_reply() -> None:
    """Only the conversation's last message can be continued: a reply cut short that ends a
    page found far back is not it."""
    a_far_needle(cut_at=PAGE + 2)  # the last of the page from the needle on
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await jump_to_the_needle(pilot)
        transcript = app.screen.query_one(Transcript)
        assert transcript.query(ReplyView).last().content == "cut short"
        assert not transcript.query(".continue"), "no Continue on a page found far back"


async def test_ctrl_f_works_from_a_field_of_the_config_pane() -> None:
    """An Input deletes a word with ctrl+f; on the chat screen ctrl+f searches everywhere."""
    two_conversations()
    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: bool(app.screen.query("#bot-name")))
        app.screen.query_one("#bot-name", Input).focus()
        await pilot.press("ctrl+f")
        assert isinstance(app.screen, SearchScreen)


async def test_nothing_found_and_nothing_typed_say_so() -> None:
    two_conversations()
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+f", *"durian")
        status = app.screen.query_one("#search-status", Static)
        await wait_for(pilot, lambda: "Nothing found" in str(status.render()))
        await pilot.press("enter")  # nothing to open: the panel stays
        assert isinstance(app.screen, SearchScreen)


async def test_the_start_screen_shows_an_upgrade_indexing_messages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = open_services().paths.data_dir / "byok-tui.sqlite3"
    path.parent.mkdir(parents=True, exist_ok=True)
    messages = [f"old {number}" for number in range(30)]
    old_database(path, schema.SEARCH_INDEX_MIGRATION - 1, messages, monkeypatch)
    monkeypatch.setattr(db, "INDEX_BATCH", 10)
    shown: list[str] = []
    show = StartScreen.show_progress

    def seen(screen: StartScreen, done: int, total: int) -> None:
        show(screen, done, total)
        shown.append(str(screen.query_one("#start-footer", Static).render()))

    monkeypatch.setattr(StartScreen, "show_progress", seen)
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
    assert [line.strip() for line in shown] == [
        f"Indexing messages for search (once, after an upgrade): {n} of 30" for n in (10, 20, 30)
    ]


async def test_the_sidebar_search_button_opens_the_panel_with_the_mouse() -> None:
    two_conversations()
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.click("#open-search")
        assert isinstance(app.screen, SearchScreen)
        assert app.screen.focused is app.screen.query_one("#search-query")


async def test_page_keys_in_the_hits_of_a_tiny_terminal_do_nothing_rather_than_crash() -> None:
    """Five lines leave the hits no room at all: Textual's list then had no lines to page
    through and PageDown ended the app with a crash report (KeyError)."""
    two_conversations()
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+f", *"citrus")
        await wait_for(pilot, lambda: len(hits_shown(app.screen)) == 1)
        await pilot.press("down")  # into the hits
        await pilot.resize_terminal(140, 5)
        await pilot.pause(0.2)
        await pilot.press("pagedown", "pageup")
        await pilot.resize_terminal(140, 40)
        await pilot.pause(0.2)
        await pilot.press("pagedown", "enter")  # and with room again, they work
        await wait_for(pilot, lambda: bool(app.screen.query(".found")))
    assert app.crash_report is None


async def test_a_search_that_answers_as_its_panel_closes_is_no_crash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The search runs in a thread: closed meanwhile (Escape), its answer may come while the
    panel's widgets are being removed and must find nothing to fill, not end the app with a
    crash report (4 of 16 random runs of keys and resizes in a terminal did)."""
    import threading

    from byok_tui.app_services.app_data import AppData

    two_conversations()
    removing = threading.Event()
    search = AppData.search

    def answers_late(self: AppData, typed: str) -> object:
        removing.wait(5)  # until the panel's widgets are removed
        return search(self, typed)

    async def unmounted(self: SearchScreen) -> None:
        # Its widgets are gone, its workers not stopped yet: the answer comes now.
        removing.set()
        await asyncio.sleep(0.2)

    monkeypatch.setattr(AppData, "search", answers_late)
    monkeypatch.setattr(SearchScreen, "on_unmount", unmounted, raising=False)
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+f", *"citrus")
        await pilot.pause(0.3)  # the search waits in its thread
        await pilot.press("escape")
        await pilot.pause(0.5)
        assert not isinstance(app.screen, SearchScreen)
    assert app.crash_report is None


async def test_a_hit_on_another_branch_opens_that_branch_at_the_message() -> None:
    """An edited message leaves its first version on another branch: a hit there shows that
    branch, with the message marked, not "no longer in this conversation"."""
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, "Fruit")
    store.add_message(conversation.id, "user", "Tell me about the quince")
    store.add_message(conversation.id, "assistant", "A quince is a pome fruit.")
    store.branch_from(conversation.id, None)  # the first message edited: a second branch
    store.add_message(conversation.id, "user", "Tell me about the medlar")
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+f", *"quince")
        await wait_for(pilot, lambda: len(hits_shown(app.screen)) == 2)
        await pilot.press("down", "down", "enter")  # the user's message
        await wait_for(pilot, lambda: bool(app.screen.query(".found")))
        [found] = app.screen.query(".found")
        assert isinstance(found, UserMessage) and found.message_text == "Tell me about the quince"
        said = [n.message for n in app._notifications]
        assert not any("no longer" in s for s in said), said
