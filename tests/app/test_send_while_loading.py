"""A message sent while a conversation is still opening is stored, shown and sent once the
conversation is open: never dropped because the screen was busy."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest
from textual.widgets import OptionList

import byok_tui.app_services.app_data
import byok_tui.app_services.chat_state
import byok_tui.screens.chat
from byok_tui.app_services.chat_state import ChatState
from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.screens.start import StartScreen
from byok_tui.storage.store import Store
from byok_tui.widgets.composer import Composer
from tests.support.fake_backend import FakeProviders
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    app_answered_by,
    chat,
    choose,
    make_app,
    replies,
    send,
    settle,
    user_messages,
    wait_for,
)

KEY = "sk-proj-" + "L" * 60
UNSENT_SETTING = "unsent-message"


class SlowLoads:
    """Holds every state read until released: the conversation takes as long as we like to
    open."""

    def __init__(self, read: Callable[..., ChatState]) -> None:
        self._read = read
        self.release = threading.Event()
        self.release.set()
        self.waiting = threading.Event()

    def __call__(self, *args: object, **kwargs: object) -> ChatState:
        self.waiting.set()
        self.release.wait(30)
        return self._read(*args, **kwargs)

    def hold(self) -> None:
        self.waiting.clear()
        self.release.clear()


@pytest.fixture
def slow_loads(monkeypatch: pytest.MonkeyPatch) -> Iterator[SlowLoads]:
    slow = SlowLoads(byok_tui.app_services.chat_state.read_state)
    monkeypatch.setattr(byok_tui.app_services.app_data, "read_state", slow)
    yield slow
    slow.release.set()


def stored(store: Store, conversation_title: str) -> list[tuple[str, str]]:
    bot = store.bots()[0]
    conversation = next(c for c in store.conversations(bot.id) if c.title == conversation_title)
    return [(m.role, m.content) for m in store.messages(conversation.id)]


async def test_a_message_sent_while_a_conversation_opens_is_sent_to_it_once_open(
    slow_loads: SlowLoads,
) -> None:
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    older = store.create_conversation(bot.id, "Older")
    store.add_message(older.id, "user", "earlier question")
    store.create_conversation(bot.id, "Newer")
    fake = FakeProviders()
    fake.enqueue("answered")
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        slow_loads.hold()
        option_list = pilot.app.screen.query_one("#conversations", OptionList)
        option_list.focus()
        option_list.highlighted = option_list.get_option_index(f"conv:{older.id}")
        await pilot.press("enter")
        await wait_for(pilot, slow_loads.waiting.is_set)

        await send(pilot, "sent while opening")
        await pilot.pause(0.3)
        # Stored at once, before anything else happens: a kill now loses nothing.
        assert store.settings().get(UNSENT_SETTING) == "sent while opening"
        assert fake.requests == []
        assert "Opening the conversation" in str(app.screen.query_one("#activity").render())

        slow_loads.release.set()
        await wait_for(pilot, lambda: replies(app) == ["answered"])
        assert user_messages(app) == ["earlier question", "sent while opening"]
        assert chat(app).query_one(Composer).text == ""
    assert stored(store, "Older") == [
        ("user", "earlier question"),
        ("user", "sent while opening"),
        ("assistant", "answered"),
    ]
    assert stored(store, "Newer") == []
    assert fake.requests[0].texts == ["earlier question", "sent while opening"]
    assert store.settings().get(UNSENT_SETTING, "") == ""


async def test_a_message_sent_before_the_first_conversation_opens_is_not_lost(
    slow_loads: SlowLoads,
) -> None:
    """The first conversation is read before the chat screen comes: a message sent on the
    start screen meanwhile is sent once it is open, under its history."""
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    slow_loads.hold()
    fake = FakeProviders()
    fake.enqueue("hello back")
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await wait_for(pilot, slow_loads.waiting.is_set)
        await send(pilot, "typed at once")
        await pilot.pause(0.2)
        assert isinstance(app.screen, StartScreen)  # still opening
        slow_loads.release.set()
        await wait_for(pilot, lambda: len(app.screen_stack) > 1)  # the chat screen came
        await wait_for(pilot, lambda: replies(app) == ["hello back"])
        assert user_messages(app) == ["typed at once"]
    assert fake.requests[0].texts[-1] == "typed at once"


async def test_a_message_left_unsent_by_a_kill_is_back_in_the_composer() -> None:
    store = open_store(open_services())
    store.set_setting(UNSENT_SETTING, "sent just before the kill")
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        assert chat(app).query_one(Composer).text == "sent just before the kill"
    # It is in the composer now, like any draft: it does not come back a second time.
    assert store.settings().get(UNSENT_SETTING, "") == ""


async def test_choosing_a_conversation_still_opens_it() -> None:
    """The plain path, beside the slow one: a click opens the conversation at once."""
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    first = store.create_conversation(bot.id, "First")
    store.add_message(first.id, "user", "in the first")
    store.create_conversation(bot.id, "Second")
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        assert user_messages(app) == []
        await choose(pilot, "#conversations", f"conv:{first.id}")
        assert user_messages(app) == ["in the first"]
