"""Every failed write reaches the user: the data service reports each write nobody waits for,
and raises for each whose result is needed. The database is made unwritable for real (SQLite's
query_only on the writer's own connection: every write fails with SQLITE_READONLY)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from textual.widgets import Input

from byok_tui.app_services.app_data import AppData
from byok_tui.app_services.services import AppContext, open_services
from byok_tui.core.records import BotConfig, Draft
from byok_tui.core.registry import get_provider
from byok_tui.keys.base import KeyStoreError
from byok_tui.providers.limits import RateLimits
from byok_tui.storage.database import StorageError
from tests.support.keys import FAKE_KEYS
from tests.support.pilot import make_app, settle, wait_for

KEY = FAKE_KEYS["openai"]


@dataclass
class Opened:
    data: AppData
    context: AppContext
    bot_id: int
    conversation_id: int
    failures: list[str]


def make_unwritable(context: AppContext) -> None:
    """Every write from the writer's thread now fails, as on a read-only file system."""

    def read_only() -> None:
        context.db.connection().execute("PRAGMA query_only = 1")

    context.writer.submit("read-only", read_only)
    context.writer.wait_idle()


def key_store_fails(context: AppContext) -> None:
    def refuse(entry: str, raw_value: str) -> bool:
        raise KeyStoreError("cannot write the key file: the disk is full")

    context.services.keys.set = refuse  # type: ignore[method-assign]


@pytest.fixture
def opened() -> Iterator[Opened]:
    context = AppContext.open(open_services())
    bot = context.db.default_bot("openai", "gpt-5.4-mini")
    conversation = context.db.create_conversation(bot.id, "kept")
    data = AppData(context)
    failures: list[str] = []
    data.on_failure = failures.append
    yield Opened(data, context, bot.id, conversation.id, failures)
    data.close()


def a_response_states_limits(opened: Opened) -> None:
    """What the client does with a response's rate-limit headers."""
    note = opened.context.client.on_limits
    assert note is not None, "the data service keeps the rate limits"
    note("openai", "global", RateLimits((("retry-after", "5"),)))


WRITES: dict[str, Callable[[Opened], None]] = {
    "save the key": lambda o: o.data.keys.save_provider_key("openai", KEY),
    "save the bot's key": lambda o: o.data.keys.save_bot_key(o.bot_id, KEY),
    "save the bot": lambda o: o.data.save_bot_config(
        o.bot_id, BotConfig("Renamed", "openai", "gpt-5.4-mini")
    ),
    "rename the conversation": lambda o: o.data.rename_conversation(o.conversation_id, "new"),
    "delete the conversation": lambda o: o.data.delete_conversation(o.conversation_id),
    "keep the message aside": lambda o: o.data.keep_unsent("a message"),
    "clear the message kept aside": lambda o: o.data.keep_unsent(""),
    "keep the message being written": lambda o: o.data.drafts.keep(Draft("half a thought")),
    "remember the conversation opened": lambda o: o.data.remember_opened(
        o.bot_id, o.conversation_id
    ),
    "record the rate limits": a_response_states_limits,
}


@pytest.mark.parametrize("what", WRITES)
def test_a_write_nobody_waits_for_reports_its_failure(opened: Opened, what: str) -> None:
    if what == "save the key":
        key_store_fails(opened.context)
    else:
        make_unwritable(opened.context)
    WRITES[what](opened)
    opened.context.writer.wait_idle()
    assert len(opened.failures) == 1, opened.failures
    said = opened.failures[0]
    assert said.startswith(f"Could not {what}: ")
    if what != "save the key":
        assert "cannot save to the database" in said and "cannot be written" in said


@pytest.mark.parametrize(
    "write",
    [
        lambda o: o.data.create_bot(BotConfig("New", "openai", "gpt-5.4-mini")),
        lambda o: o.data.delete_bot(o.bot_id),
        lambda o: o.data.create_conversation(o.bot_id, "new"),
    ],
    ids=["create a bot", "delete a bot", "create a conversation"],
)
def test_a_write_whose_result_is_needed_raises_its_failure(
    opened: Opened, write: Callable[[Opened], object]
) -> None:
    make_unwritable(opened.context)
    with pytest.raises(StorageError, match="cannot be written"):
        write(opened)
    assert opened.failures == []  # raised to the caller, who shows it: not said twice


def test_a_read_sees_every_write_queued_before_it(opened: Opened) -> None:
    opened.data.save_bot_config(opened.bot_id, BotConfig("Renamed", "openai", "gpt-5.4-mini"))
    opened.data.keys.save_provider_key("openai", KEY)
    assert opened.data.bot(opened.bot_id).name == "Renamed"
    assert opened.data.keys.stored_keys([get_provider("openai")]) == {"openai": KEY}
    assert opened.data.key_in_use(opened.bot_id).found


async def test_the_app_shows_a_failed_bot_save() -> None:
    """Renaming the bot in the config pane while the database cannot be written: the user is
    told, in a notification naming the database and what to do."""
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        make_unwritable(app.context)
        app.screen.query_one("#bot-name", Input).value = "Renamed"

        def told() -> bool:
            return any("Could not save the bot" in n.message for n in app._notifications)

        await wait_for(pilot, told)
        said = next(n.message for n in app._notifications if "Could not save the bot" in n.message)
        assert "cannot be written" in said and "Make its folder writable" in said


def test_no_error_is_swallowed_by_the_writer(opened: Opened) -> None:
    """A failure of any kind (not only a ByokError) is reported, redacted."""

    def broken(conversation_id: int, title: str) -> None:
        raise RuntimeError(f"unexpected, with {KEY} in it")

    opened.context.db.rename_conversation = broken  # type: ignore[method-assign]
    opened.data.rename_conversation(opened.conversation_id, "new")
    opened.context.writer.wait_idle()
    assert opened.failures == [
        "Could not rename the conversation: unexpected, with [REDACTED] in it"
    ]
