"""Knowing the cost before sending: a local estimate of the whole request (system prompt,
history, draft), in the app while typing and with `ask --estimate`; never a request."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import pytest
from textual.widgets import TextArea

import byok_tui.app_services.app_data
import byok_tui.app_services.chat_state
from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.providers.types import Usage
from byok_tui.spend.estimate import Estimate, estimate, estimated_tokens
from byok_tui.spend.pricing import cost_of
from tests.support.cli import run_cli
from tests.support.pilot import WIDTH_WITHOUT_CONFIG_PANE, choose, make_app, settle, wait_for
from tests.support.provider_server import ProviderServer

if TYPE_CHECKING:
    from byok_tui.app import ByokApp
    from byok_tui.core.records import Conversation
    from byok_tui.storage.store import Store

KEY = "sk-proj-" + "E" * 60


def long_conversation() -> tuple[Store, Conversation]:
    """An OpenAI key, a gpt-5.5 bot, and a conversation of 8,000 characters."""
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, "long")
    store.add_message(conversation.id, "user", "q" * 4000)
    store.add_message(conversation.id, "assistant", "a" * 4000)
    return store, conversation


def test_tokens_are_estimated_from_length_with_a_little_per_message() -> None:
    assert estimated_tokens(["", "abcd" * 100]) == 100 + 4  # an empty system prompt: nothing
    assert estimated_tokens(["a", "b"]) == 2 * (1 + 4)
    guess = estimate("openai", "gpt-5.5", ["x" * 4000])
    assert guess.cost_usd == cost_of("openai", "gpt-5.5", Usage(1004, 0)).usd
    assert Estimate(3400, 0.0102).line() == "≈ 3.4k tokens in · ≈ $0.010"
    assert Estimate(12, None).line() == "≈ 12 tokens in · price unknown"


def test_ask_estimate_prints_the_estimate_and_sends_and_stores_nothing(
    server: ProviderServer,
) -> None:
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    done = run_cli(
        "ask",
        "-p",
        "openai",
        "-m",
        "gpt-5.5",
        "--system",
        "Be brief.",
        "--estimate",
        "x" * 400,
        env={"BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1"},
    )
    assert done.returncode == 0, done.stderr
    expected = estimate("openai", "gpt-5.5", ["Be brief.", "x" * 400])
    assert done.stdout.strip() == f"{expected.line()} (openai gpt-5.5); nothing was sent"
    assert server.requests == []
    store = open_store(open_services())
    assert all(not store.conversations(bot.id) for bot in store.bots())


async def test_the_app_estimates_the_whole_request_while_typing_without_a_request(
    server: ProviderServer,
) -> None:
    long_conversation()
    app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"hello")

        def activity() -> str:
            return str(app.screen.query_one("#activity").render())

        await wait_for(pilot, lambda: "tokens in" in activity())
        expected = estimate("openai", "gpt-5.5", ["q" * 4000, "a" * 4000, "hello"])
        assert activity().strip() == expected.line()
        assert expected.tokens > 2000, "the history counts, not only the draft"
        for _ in range(5):
            await pilot.press("backspace")
        await wait_for(pilot, lambda: activity().strip() == "")
    assert server.requests == []


def test_the_estimate_of_a_bot_whose_provider_was_removed_still_counts_its_history() -> None:
    """A provider the user defined, removed since: the estimate counts the history that fits
    the smallest window (as for any provider the registry knows nothing of), never fails."""
    from byok_tui.app_services.app_data import AppData
    from byok_tui.app_services.services import AppContext
    from byok_tui.core.records import BotConfig

    context = AppContext.open(open_services())
    bot = context.db.create_bot(BotConfig("Gone", "removed-provider", "some-model"))
    conversation = context.db.create_conversation(bot.id, "kept")
    context.db.add_message(conversation.id, "user", "q" * 4000)
    data = AppData(context)
    try:
        line = data.estimate(bot.id, conversation.id, "hello")
    finally:
        data.close()
    expected = estimate("removed-provider", "some-model", ["q" * 4000, "hello"])
    assert line == expected.line()


def test_editing_a_message_estimates_the_branch_the_edit_would_send() -> None:
    """`e` on the first message: what follows it is not sent with the edit, so it is not
    counted (the estimate said ~50 tokens for a request of ~5)."""
    from byok_tui.app_services.app_data import AppData
    from byok_tui.app_services.services import AppContext

    context = AppContext.open(open_services())
    bot = context.db.default_bot("openai", "gpt-5.5")
    conversation = context.db.create_conversation(bot.id, "long")
    first = context.db.add_message(conversation.id, "user", "first question")
    context.db.add_message(conversation.id, "assistant", "a" * 4000)
    context.db.add_message(conversation.id, "user", "b" * 4000)
    data = AppData(context)
    try:
        line = data.estimate(bot.id, conversation.id, "edited question", edit_of=first.id)
        whole = data.estimate(bot.id, conversation.id, "edited question")
    finally:
        data.close()
    assert line == estimate("openai", "gpt-5.5", ["", "edited question"]).line()
    assert whole != line


def activity_of(app: ByokApp) -> str:
    return str(app.screen.query_one("#activity").render()).strip()


async def test_the_estimate_follows_the_conversation_the_draft_would_go_to(
    server: ProviderServer,
) -> None:
    """The draft stays when another conversation is opened, and what sending it would cost
    is worked out again: its history counts now, not the one left."""
    store, long = long_conversation()
    store.create_conversation(long.bot_id, "newer")  # the one that opens
    app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"hello")
        alone = estimate("openai", "gpt-5.5", ["hello"]).line()
        await wait_for(pilot, lambda: activity_of(app) == alone)

        await choose(pilot, "#conversations", f"conv:{long.id}")
        with_history = estimate("openai", "gpt-5.5", ["q" * 4000, "a" * 4000, "hello"]).line()
        await wait_for(pilot, lambda: activity_of(app) == with_history)
    assert server.requests == []


async def test_a_draft_typed_while_the_app_opens_its_conversation_is_estimated_once_open(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Typing paused before the conversation was read: the estimate waited for it, rather
    than saying nothing until the next key."""
    long_conversation()
    release = threading.Event()
    read_state = byok_tui.app_services.chat_state.read_state

    def held(*args: Any, **kwargs: Any) -> Any:
        release.wait(30)
        return read_state(*args, **kwargs)

    monkeypatch.setattr(byok_tui.app_services.app_data, "read_state", held)
    app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await pilot.press(*"hello")
        await pilot.pause(0.5)  # typing paused: the estimate's moment, nothing open yet
        release.set()
        expected = estimate("openai", "gpt-5.5", ["q" * 4000, "a" * 4000, "hello"]).line()
        await wait_for(pilot, lambda: len(app.screen_stack) > 1)  # the chat screen came
        await wait_for(pilot, lambda: activity_of(app) == expected)
    assert server.requests == []


async def test_the_estimate_follows_the_bots_settings(server: ProviderServer) -> None:
    """A system prompt written in the bot's settings is part of every request: the draft's
    estimate counts it as soon as it is saved."""
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    store = open_store(open_services())
    store.default_bot("openai", "gpt-5.5")
    app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"hello")
        await wait_for(
            pilot, lambda: activity_of(app) == estimate("openai", "gpt-5.5", ["hello"]).line()
        )

        app.screen.query_one("#bot-system", TextArea).text = "s" * 4000
        with_prompt = estimate("openai", "gpt-5.5", ["s" * 4000, "hello"]).line()
        await wait_for(pilot, lambda: activity_of(app) == with_prompt)
    assert server.requests == []


def test_a_conversation_going_on_with_a_kept_model_is_estimated_and_keyed_for_that_model() -> None:
    """A compare's reply kept: the conversation's next message goes to its model, so the
    estimate prices that model, and the pane's "Next message" line names it and the key it
    goes with (the provider's own, never the bot's key for another provider)."""
    from byok_tui.app_services.app_data import AppData
    from byok_tui.app_services.services import AppContext

    store = open_key_store(app_paths())
    store.set(entry_name("mistral"), "M" * 32)
    context = AppContext.open(open_services())
    bot = context.db.default_bot("openai", "gpt-5.5")
    context.db.set_bot_key(bot.id, KEY)
    conversation = context.db.create_conversation(bot.id, "compared")
    context.db.add_message(conversation.id, "user", "2+2?")
    reply = context.db.add_message(
        conversation.id, "assistant", "Four.", provider="mistral", model="mistral-small-latest"
    )
    context.db.switch_to(reply.id, keep_its_model=True)
    data = AppData(context)
    try:
        line = data.estimate(bot.id, conversation.id, "And 3+3?")
        key = data.key_in_use(bot.id, conversation.id)
        elsewhere = data.key_in_use(bot.id)
    finally:
        data.close()
    texts = ["", "2+2?", "Four.", "And 3+3?"]
    assert line == estimate("mistral", "mistral-small-latest", texts).line()
    assert key.found and "mistral-small-latest" in key.line and "per-bot" not in key.line
    assert "mistral" not in elsewhere.line, "the bot's other conversations use the bot's model"


def test_a_kept_model_on_a_provider_removed_since_gives_the_conversation_the_bot_s_model() -> None:
    """A compare's reply kept from a provider the user defined, then removed from the config
    file: the conversation still opens (never a crash), on the bot's own model, as a bot
    on a removed provider is moved to one that exists."""
    from byok_tui.app_services.app_data import AppData
    from byok_tui.app_services.services import AppContext

    context = AppContext.open(open_services())
    bot = context.db.default_bot("openai", "gpt-5.5")
    conversation = context.db.create_conversation(bot.id, "compared")
    context.db.add_message(conversation.id, "user", "2+2?")
    reply = context.db.add_message(
        conversation.id, "assistant", "Four.", provider="lmstudio", model="qwen-7b"
    )
    context.db.switch_to(reply.id, keep_its_model=True)  # lmstudio is defined nowhere now
    data = AppData(context)
    try:
        state = data.chat_state(bot.id, conversation.id)
        line = data.estimate(bot.id, conversation.id, "And 3+3?")
    finally:
        data.close()
    assert state.conversation is not None and state.conversation.continues_on is None
    assert "qwen-7b" not in state.key_in_use.line
    assert line == estimate("openai", "gpt-5.5", ["", "2+2?", "Four.", "And 3+3?"]).line()
