"""Every reply shows what it was billed for, from the token counts in the provider's stream,
priced once when it ends and stored: reopened later, it shows the same."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from byok_tui.app import ByokApp
from byok_tui.app_services.services import open_services, open_store
from byok_tui.chat.outgoing import Outgoing
from byok_tui.core.money import format_usd
from byok_tui.core.paths import app_paths
from byok_tui.core.records import Cost
from byok_tui.keys import entry_name, open_key_store
from byok_tui.providers.types import Usage
from byok_tui.spend.pricing import cost_of
from byok_tui.widgets.message_views import ReplyView
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    make_app,
    replies,
    replying,
    send,
    settle,
    wait_for,
)
from tests.support.provider_server import ProviderServer, openai_reply

KEY = "sk-proj-" + "C" * 60
USAGE = {"prompt_tokens": 1204, "completion_tokens": 388}


def meta_lines(app: ByokApp) -> list[str]:
    return [view._meta for view in app.screen.query(ReplyView)]


async def test_a_reply_shows_its_tokens_and_cost_and_keeps_them(server: ProviderServer) -> None:
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    store = open_store(open_services())
    store.default_bot("openai", "gpt-5.5")
    server.reply_with(openai_reply("Priced.", usage=USAGE))
    expected = cost_of("openai", "gpt-5.5", Usage(1204, 388))
    assert expected.usd is not None and expected.usd > 0
    line = f"1,204 in · 388 out · {format_usd(expected.usd)}"
    env = {"BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1"}

    app = make_app(**env)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "what does this cost?")
        await wait_for(pilot, lambda: replies(app) == ["Priced."] and not replying(app))
        await wait_for(pilot, lambda: any(line in meta for meta in meta_lines(app)))
        assert meta_lines(app) == [f"openai · gpt-5.5 · global key · {line}"]
        assert f"{format_usd(expected.usd)} this chat" in app.sub_title
    assert server.requests[0].json["stream_options"] == {"include_usage": True}

    (reply,) = [m for m in store.messages(store.conversations(1)[0].id) if m.role == "assistant"]
    assert (reply.input_tokens, reply.output_tokens) == (1204, 388)
    assert reply.cost_usd == expected.usd
    assert reply.price is not None and reply.price.startswith("genai-prices ")

    app = make_app(**env)  # reopened: the stored figures, not worked out again
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        assert meta_lines(app) == [f"openai · gpt-5.5 · global key · {line}"]
        assert f"{format_usd(expected.usd)} this chat" in app.sub_title


async def test_a_reply_whose_price_is_not_known_says_so_never_zero(
    server: ProviderServer,
) -> None:
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    store.update_bot(bot.id, replace(bot.config, model="gpt-unpriced"))
    server.reply_with(openai_reply("Who knows.", usage=USAGE))
    app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "and this?")
        await wait_for(pilot, lambda: any("price unknown" in meta for meta in meta_lines(app)))
        assert "$0" not in meta_lines(app)[0]
        assert "this chat" not in app.sub_title


async def test_a_reply_stopped_after_its_usage_came_is_priced_off_the_event_loop(
    server: ProviderServer, monkeypatch: Any
) -> None:
    """Loading the price data the first time takes ~0.3 s: a stop (Esc, or SIGTERM for ask)
    just after the token counts came must not freeze the screen for it."""
    import threading

    import byok_tui.chat.reply_recorder
    from byok_tui.chat.conversation import ConversationService
    from tests.support.provider_client import client_for

    priced_on: list[bool] = []

    def watched_cost_of(provider: str, model: str, usage: Usage | None) -> Cost:
        priced_on.append(threading.current_thread() is threading.main_thread())
        return cost_of(provider, model, usage)

    monkeypatch.setattr(byok_tui.chat.reply_recorder, "cost_of", watched_cost_of)
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, "stopped")
    server.reply_with(openai_reply("Partly", usage={"prompt_tokens": 900, "completion_tokens": 0}))
    client = client_for("openai", server, open_key_store(app_paths()), key=KEY)
    async with client:
        sending = ConversationService(store, client).send(bot, conversation, Outgoing("go"))
        async for event in sending:
            if isinstance(event, Usage):
                break  # the counts came; the end of the stream has not been read yet
        await sending.aclose()  # as Esc does
    (reply,) = [m for m in store.messages(conversation.id) if m.role == "assistant"]
    assert reply.content == "Partly" and reply.status == "partial"  # saved at once
    assert priced_on == [False], "priced in a thread, never on the event loop's"
    for _ in range(100):
        reply = store.message(reply.id)
        if reply.cost_usd is not None:
            break
        await asyncio.sleep(0.05)
    assert reply.cost_usd == cost_of("openai", "gpt-5.5", Usage(900, 0)).usd


async def test_the_titles_cost_is_this_chats_after_a_new_chat_and_a_continue(
    server: ProviderServer,
) -> None:
    """ctrl+n starts a chat that has cost nothing yet; a reply cut at the length limit and
    continued with `c` is counted once: its first part plus the continuation."""
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    store = open_store(open_services())
    store.default_bot("openai", "gpt-5.5")
    first = cost_of("openai", "gpt-5.5", Usage(1204, 388)).usd
    assert first is not None
    server.reply_with(
        openai_reply("Cut", usage=USAGE, finish_reason="length"),
        openai_reply(" short.", usage=USAGE),
        openai_reply("Fresh.", usage=USAGE),
    )
    app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "one")
        await wait_for(pilot, lambda: f"{format_usd(first)} this chat" in app.sub_title)
        app.screen.query(ReplyView).last().focus()
        await pilot.press("c")
        await wait_for(pilot, lambda: replies(app) == ["Cut short."] and not replying(app))
        await wait_for(pilot, lambda: f"{format_usd(2 * first)} this chat" in app.sub_title)
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert "this chat" not in app.sub_title
        await send(pilot, "two")
        await wait_for(pilot, lambda: replies(app) == ["Fresh."] and not replying(app))
        await wait_for(pilot, lambda: f"{format_usd(first)} this chat" in app.sub_title)


async def test_at_80_columns_the_titles_cost_is_never_the_part_cut(server: ProviderServer) -> None:
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    store.update_bot(bot.id, replace(bot.config, name="My research assistant for papers"))
    store.set_last_opened(bot.id, None)
    server.reply_with(openai_reply("Priced.", usage=USAGE))
    app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await send(pilot, "what does this cost?")
        await wait_for(pilot, lambda: "this chat" in app.sub_title)
        assert len("byok-tui — " + app.sub_title) <= 80 - 8, app.sub_title
        assert app.sub_title.endswith(" this chat")
