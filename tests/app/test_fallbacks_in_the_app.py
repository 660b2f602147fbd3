"""Fallbacks in the app: a countdown line says what went wrong and which fallback is asked in
5 s; Esc stays (the error block as before, nothing more sent); once asked, the reply streams
from the fallback and its line says so. Set in the config pane as provider:model."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from textual.widgets import Input

from byok_tui.app import ByokApp
from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.paths import app_paths
from byok_tui.core.records import BotConfig
from byok_tui.keys import entry_name, open_key_store
from byok_tui.widgets.message_views import ReplyView
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    FakeClock,
    error_texts,
    make_app,
    replies,
    send,
    settle,
    state,
    wait_for,
)
from tests.support.provider_server import ProviderServer, Reply, openai_reply, provider_server

FALLBACK = "groq:llama-3.3-70b-versatile"
COUNTDOWN = f"openai: rate-limited. Switching to {FALLBACK} in"


def limited() -> Reply:
    body = json.dumps({"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}})
    return Reply(429, {"content-type": "application/json"}, [body.encode()])


@pytest.fixture
def servers() -> Iterator[tuple[ProviderServer, ProviderServer]]:
    keys = open_key_store(app_paths())
    keys.set(entry_name("openai"), "sk-proj-" + "O" * 50)
    keys.set(entry_name("groq"), "gsk_" + "G" * 52)
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.4-mini")
    store.update_bot(bot.id, BotConfig("Default", "openai", "gpt-5.4-mini", fallbacks=(FALLBACK,)))
    with provider_server() as openai, provider_server() as groq:
        openai.reply_with(limited())
        groq.reply_with(openai_reply("from groq"))
        yield openai, groq


def app_for(openai: ProviderServer, groq: ProviderServer) -> ByokApp:
    return make_app(
        BYOK_TUI_OPENAI_BASE_URL=f"{openai.base_url}/v1",
        BYOK_TUI_GROQ_BASE_URL=f"{groq.base_url}/openai/v1",
    )


def activity(app: ByokApp) -> str:
    return str(app.screen.query_one("#activity").render())


async def test_the_countdown_then_the_fallback_answers_and_is_named(
    servers: tuple[ProviderServer, ProviderServer],
) -> None:
    openai, groq = servers
    app = app_for(openai, groq)
    app.clock = clock = FakeClock()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "busy?")
        await wait_for(pilot, lambda: f"{COUNTDOWN} 5 s (Esc to stay)" in activity(app))
        assert "Rate limit reached" in error_texts(app)[0]
        clock.advance(3)
        await wait_for(pilot, lambda: f"{COUNTDOWN} 2 s" in activity(app))
        assert groq.requests == []  # not a moment before
        clock.advance(2)
        await wait_for(pilot, lambda: replies(app) == ["from groq"])
        reply = app.screen.query(ReplyView).last()
        meta = str(reply.query_one(".meta").render())
        assert f"answered by fallback {FALLBACK}" in meta
        assert state(app).bot.config.provider == "openai"  # the bot itself is unchanged
    assert len(openai.requests) == 1 and len(groq.requests) == 1
    assert groq.requests[0].header("authorization") == "Bearer gsk_" + "G" * 52


async def test_escape_stays_with_the_error_block_and_sends_nothing_more(
    servers: tuple[ProviderServer, ProviderServer],
) -> None:
    openai, groq = servers
    app = app_for(openai, groq)
    app.clock = clock = FakeClock()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "busy?")
        await wait_for(pilot, lambda: COUNTDOWN in activity(app))
        await pilot.press("escape")
        await wait_for(pilot, lambda: COUNTDOWN not in activity(app))
        clock.advance(30)
        await pilot.pause(0.6)  # two ticks of the activity line
        assert replies(app) == []
        assert "Rate limit reached" in error_texts(app)[0]
    assert groq.requests == []


async def test_fallbacks_are_set_in_the_config_pane(
    servers: tuple[ProviderServer, ProviderServer],
) -> None:
    openai, groq = servers
    app = app_for(openai, groq)
    async with app.run_test(size=(140, 50)) as pilot:
        await settle(pilot)
        field = app.screen.query_one("#bot-fallbacks", Input)
        assert field.value == FALLBACK
        field.value = "groq"
        warning = app.screen.query_one("#bot-fallbacks-warning")
        await wait_for(pilot, lambda: "is not a fallback" in str(warning.render()))
        field.value = f"{FALLBACK}, openai:gpt-5.5"
        await wait_for(
            pilot, lambda: state(app).bot.config.fallbacks == (FALLBACK, "openai:gpt-5.5")
        )
        store = open_store(open_services())
        await wait_for(
            pilot,
            lambda: store.bot("Default").config.fallbacks == (FALLBACK, "openai:gpt-5.5"),
        )


async def test_a_short_wait_is_retried_once_then_the_countdown_starts(
    servers: tuple[ProviderServer, ProviderServer],
) -> None:
    openai, groq = servers
    body = json.dumps({"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}})
    short = Reply(429, {"content-type": "application/json", "retry-after": "2"}, [body.encode()])
    openai.reply_with(short, short)
    app = app_for(openai, groq)
    app.clock = clock = FakeClock()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "busy?")
        await wait_for(pilot, lambda: "retry in 2 s" in activity(app))
        clock.advance(2)
        await wait_for(pilot, lambda: COUNTDOWN in activity(app))
        assert len(openai.requests) == 2 and groq.requests == []
        clock.advance(5)
        await wait_for(pilot, lambda: replies(app) == ["from groq"])


async def test_no_countdown_once_text_has_arrived() -> None:
    from byok_tui.core.errors import ErrorKind
    from byok_tui.core.registry import get_provider
    from byok_tui.providers.errors import ProviderError
    from tests.support.fake_backend import FakeProviders
    from tests.support.pilot import app_answered_by

    open_key_store(app_paths()).set(entry_name("openai"), "sk-proj-" + "O" * 50)
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.4-mini")
    store.update_bot(bot.id, BotConfig("Default", "openai", "gpt-5.4-mini", fallbacks=(FALLBACK,)))
    fake = FakeProviders()
    failing = ProviderError(
        ErrorKind.OVERLOADED, "OpenAI: 500 failing", provider=get_provider("openai"), status=500
    )
    fake.enqueue("Half an ans", error=failing)
    app = app_answered_by(fake)
    app.clock = FakeClock()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "hi")
        await wait_for(pilot, lambda: bool(error_texts(app)))
        await pilot.pause(0.6)  # a tick of the activity line
        assert "Switching" not in activity(app)
        assert replies(app) == ["Half an ans"]
    assert [r.provider_id for r in fake.requests] == ["openai"]
