"""The app, driven by Pilot: keys set, rotated and overridden reach the server at once."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from byok_tui.app_services.services import AppContext, open_services
from byok_tui.core.paths import app_paths
from byok_tui.core.records import BotConfig
from byok_tui.keys import entry_name, open_key_store
from byok_tui.widgets.config_pane import ConfigPane
from byok_tui.widgets.key_field import KeyField
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    FakeClock,
    choose,
    error_texts,
    make_app,
    replies,
    send,
    settle,
    state,
    type_into,
    user_messages,
    wait_for,
)
from tests.support.provider_server import ProviderServer, Reply, openai_reply, provider_server

FIRST = "sk-proj-FIRST" + "1" * 50
SECOND = "sk-proj-SECOND" + "2" * 50
PER_BOT = "sk-proj-PERBOT" + "3" * 50


@pytest.fixture
def openai_server() -> Iterator[ProviderServer]:
    with provider_server() as server:
        server.reply_with(openai_reply("Hello from the server"))
        yield server


def openai_env(server: ProviderServer) -> dict[str, str]:
    return {"BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1"}


def auth_headers(server: ProviderServer) -> list[str | None]:
    return [r.header("authorization") for r in server.requests]


async def test_a_key_typed_in_settings_is_sent_with_the_next_message(
    openai_server: ProviderServer,
) -> None:
    app = make_app(**openai_env(openai_server))
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        field = app.screen.query_one("#row-openai KeyField", KeyField)
        await type_into(pilot, field, FIRST)
        await pilot.press("escape")
        await settle(pilot)
        await choose(pilot, "#providers", "provider:openai")
        await send(pilot, "Hi there")
        await wait_for(pilot, lambda: replies(app) == ["Hello from the server"])
    assert auth_headers(openai_server) == [f"Bearer {FIRST}"]
    assert open_key_store(app_paths()).get(entry_name("openai")) == FIRST


async def test_settings_closed_as_it_opens_then_opened_again_shows_the_key_stored() -> None:
    """Escape pressed while Settings is still putting its rows in place (they go in once
    its scroll area has the focus) closes it without an error; opened again, every provider
    is there and the key stored is in its field."""
    open_key_store(app_paths()).set(entry_name("openai"), FIRST)
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        for _ in range(3):
            await pilot.press("ctrl+s", "escape")
            await settle(pilot)
            assert type(app.screen).__name__ == "ChatScreen"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert len(app.screen.query(".provider-row")) >= 9
        field = app.screen.query_one("#row-openai KeyField", KeyField)
        assert field.value == FIRST
        assert app.focused is app.screen.query_one("#settings")
        assert app.is_running


async def test_a_key_rotated_in_the_config_pane_is_used_by_the_very_next_message(
    openai_server: ProviderServer,
) -> None:
    open_key_store(app_paths()).set(entry_name("openai"), FIRST)
    app = make_app(**openai_env(openai_server))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert state(app).bot.config.provider == "openai"  # the provider with a key
        await send(pilot, "one")
        await wait_for(pilot, lambda: len(replies(app)) == 1)
        await type_into(pilot, app.screen.query_one("#global-key", KeyField), SECOND)
        await send(pilot, "two")  # at once: no pause, no restart
        await wait_for(pilot, lambda: len(replies(app)) == 2)
    assert auth_headers(openai_server) == [f"Bearer {FIRST}", f"Bearer {SECOND}"]


async def test_a_per_bot_key_is_used_for_that_bot_only_and_clearing_it_falls_back(
    openai_server: ProviderServer,
) -> None:
    open_key_store(app_paths()).set(entry_name("openai"), FIRST)
    context = AppContext.open(open_services())
    other = context.db.create_bot(BotConfig("Other", "openai", "gpt-5.5"))
    app = make_app(**openai_env(openai_server))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        pane = app.screen.query_one(ConfigPane)
        await type_into(pilot, pane.query_one("#bot-key", KeyField), PER_BOT)
        await settle(pilot)
        assert "per-bot key" in str(pane.query_one("#key-in-use").render())
        await send(pilot, "mine")
        await wait_for(pilot, lambda: len(replies(app)) == 1)

        await choose(pilot, "#bots", f"bot:{other.id}")
        await send(pilot, "other bot")
        await wait_for(
            pilot, lambda: len(replies(app)) == 1 and user_messages(app) == ["other bot"]
        )
        await wait_for(pilot, lambda: len(openai_server.requests) == 2)

        default = next(b for b in state(app).bots if b.name == "Default")
        await choose(pilot, "#bots", f"bot:{default.id}")
        await type_into(pilot, app.screen.query_one("#bot-key", KeyField), "")
        await send(pilot, "cleared")
        await wait_for(pilot, lambda: len(openai_server.requests) == 3)
    assert auth_headers(openai_server) == [
        f"Bearer {PER_BOT}",
        f"Bearer {FIRST}",
        f"Bearer {FIRST}",
    ]


async def test_switching_provider_in_the_sidebar_sends_to_that_provider() -> None:
    open_key_store(app_paths()).set(entry_name("openai"), FIRST)
    open_key_store(app_paths()).set(entry_name("groq"), "gsk_" + "g" * 52)
    with provider_server() as openai, provider_server() as groq:
        openai.reply_with(openai_reply("from openai"))
        groq.reply_with(openai_reply("from groq"))
        app = make_app(**openai_env(openai), BYOK_TUI_GROQ_BASE_URL=f"{groq.base_url}/openai/v1")
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
            await settle(pilot)
            await choose(pilot, "#providers", "provider:groq")
            assert state(app).bot.config.provider == "groq"
            await send(pilot, "which one?")
            await wait_for(pilot, lambda: replies(app) == ["from groq"])
        assert openai.requests == []
        assert groq.requests[0].json["model"] == "llama-3.3-70b-versatile"


async def test_no_key_shows_the_error_block_sends_nothing_and_keeps_the_message(
    openai_server: ProviderServer,
) -> None:
    app = make_app(**openai_env(openai_server))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await choose(pilot, "#providers", "provider:openai")
        await send(pilot, "Is anyone there?")
        await wait_for(pilot, lambda: bool(error_texts(app)))
        assert "No API key for OpenAI" in error_texts(app)[0]
        assert "correct provider" in error_texts(app)[0]
        assert user_messages(app) == ["Is anyone there?"]
        assert openai_server.requests == []
        # Fix the key, then one key retries the same message.
        await type_into(pilot, app.screen.query_one("#global-key", KeyField), FIRST)
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: replies(app)[-1:] == ["Hello from the server"])
    assert openai_server.requests[0].json["messages"][-1]["content"] == "Is anyone there?"


async def test_a_429_counts_down_then_retries_by_itself() -> None:
    """The provider's own wait (Retry-After: 30) is counted down, then the message is sent
    once more without the user doing anything; not a moment before the wait is over."""
    open_key_store(app_paths()).set(entry_name("openai"), FIRST)
    limited = Reply(
        429,
        {"content-type": "application/json", "retry-after": "30"},
        [b'{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}'],
    )
    with provider_server() as server:
        server.reply_with(limited, openai_reply("after the wait"))
        app = make_app(**openai_env(server))
        app.clock = clock = FakeClock()
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
            await settle(pilot)
            await send(pilot, "busy?")

            def activity() -> str:
                return str(app.screen.query_one("#activity").render())

            await wait_for(pilot, lambda: "Rate limited · retry in 30 s" in activity())
            assert "Rate limit reached" in error_texts(app)[0]
            clock.advance(20)
            await wait_for(pilot, lambda: "retry in 10 s" in activity())
            assert len(server.requests) == 1  # still waiting
            clock.advance(10)
            await wait_for(pilot, lambda: replies(app)[-1:] == ["after the wait"])
        assert len(server.requests) == 2
