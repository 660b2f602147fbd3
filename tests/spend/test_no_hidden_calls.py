"""No hidden calls: starting the app, opening a conversation, typing (the cost estimate) and
quitting spend no key: no request reaches any key provider."""

from __future__ import annotations

from byok_tui.keys import entry_name, open_key_store
from byok_tui.paths import app_paths
from byok_tui.providers.endpoints import override_variable
from byok_tui.registry import key_providers
from tests.support.pilot import make_app, settle, wait_for
from tests.support.provider_client import base_for
from tests.support.provider_server import ProviderServer


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
