"""No hidden calls: starting the app, opening a conversation, typing (the cost estimate) and
quitting spend no key: no request reaches any key provider."""

from __future__ import annotations

from textual.widgets import Button

from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.paths import app_paths
from byok_tui.core.registry import key_providers
from byok_tui.keys import entry_name, open_key_store
from byok_tui.providers.endpoints import override_variable
from tests.support.pilot import make_app, settle, wait_for
from tests.support.provider_client import base_for
from tests.support.provider_server import ProviderServer, Reply


async def test_starting_typing_and_quitting_makes_no_request_to_a_key_provider(
    server: ProviderServer,
) -> None:
    keys = open_key_store(app_paths())
    env = {}
    for provider in key_providers():
        keys.set(entry_name(provider.id), f"test-key-{provider.id}-" + "k" * 24)
        env[override_variable(provider)] = base_for(provider, server)
    app = make_app(**env)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"what would this cost?")
        await wait_for(
            pilot, lambda: "tokens in" in str(app.screen.query_one("#activity").render())
        )
        await pilot.press("ctrl+q")
    assert server.requests == [], [r.target for r in server.requests]
    # The request log agrees: at most the local runtime was probed (it needs no key).
    logged = open_store(open_services()).ledger.requests()
    assert {(row["provider"], row["purpose"]) for row in logged} <= {("ollama", "probe")}


async def test_a_key_test_in_settings_is_logged_as_one(server: ProviderServer) -> None:
    keys = open_key_store(app_paths())
    keys.set(entry_name("groq"), "gsk_" + "T" * 48 + "Zz90")
    server.reply_with(
        Reply(headers={"content-type": "application/json"}, steps=[b'{"data":[{"id":"m1"}]}'])
    )
    app = make_app(BYOK_TUI_GROQ_BASE_URL=f"{server.base_url}/openai/v1")
    async with app.run_test(size=(140, 60)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        app.screen.query_one("#row-groq .test-key", Button).press()
        result = "#row-groq .test-result"
        await wait_for(pilot, lambda: "The key works" in str(app.screen.query_one(result).render()))
    logged = open_store(open_services()).ledger.requests()
    tests = [row for row in logged if row["provider"] == "groq"]
    assert [(r["purpose"], r["status"], r["key_last4"]) for r in tests] == [
        ("key test", 200, "Zz90")
    ]


async def test_a_new_conversations_title_is_made_locally_and_costs_no_request(
    server: ProviderServer,
) -> None:
    """The first message starts a conversation titled from its own words: the one request
    made is the chat, and the request log shows nothing else."""
    from tests.support.pilot import replying, send
    from tests.support.provider_server import openai_reply

    open_key_store(app_paths()).set(entry_name("groq"), "gsk_" + "T" * 48 + "Zz90")
    server.reply_with(openai_reply("Sure."))
    app = make_app(BYOK_TUI_GROQ_BASE_URL=f"{server.base_url}/openai/v1")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "Plan a   three-day trip\nto Lisbon in May")
        await wait_for(pilot, lambda: not replying(app))
    store = open_store(open_services())
    [conversation] = store.conversations(store.bots()[0].id)
    assert conversation.title == "Plan a three-day trip to Lisbon in May"
    assert len(server.requests) == 1
    logged = open_store(open_services()).ledger.requests()
    assert [(r["provider"], r["purpose"]) for r in logged if r["provider"] != "ollama"] == [
        ("groq", "chat")
    ]
