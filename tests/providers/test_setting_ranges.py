"""Each provider's ranges for temperature and max tokens live in the registry. A value outside
them is refused before any request, with the range in words: a usage error (exit 2) in `ask`
and `bot add`, a field message in the config pane, an error block for a saved bot. A value is
never silently changed."""

from __future__ import annotations

import json

import pytest
from textual.widgets import Input, Select, Static

from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.paths import app_paths
from byok_tui.core.records import BotConfig
from byok_tui.core.registry import get_provider, providers
from byok_tui.keys import entry_name, open_key_store
from byok_tui.providers.errors import SettingOutOfRangeError
from byok_tui.storage.bot_fields import BotInputError, check_bot_fields
from byok_tui.storage.share import encode_bot_link
from tests.support.cli import run_cli
from tests.support.keys import FAKE_KEYS
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    error_texts,
    make_app,
    send,
    settle,
    user_messages,
    wait_for,
)
from tests.support.provider_client import base_for, chat, client_for, collect
from tests.support.provider_server import ProviderServer, openai_reply

GROQ_KEY = FAKE_KEYS["groq"]
ANTHROPIC_KEY = FAKE_KEYS["anthropic"]


def groq_env(server: ProviderServer) -> dict[str, str]:
    return {"BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1", "GROQ_API_KEY": GROQ_KEY}


def anthropic_env(server: ProviderServer) -> dict[str, str]:
    return {
        "BYOK_TUI_ANTHROPIC_BASE_URL": base_for(get_provider("anthropic"), server),
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
    }


def test_the_registry_holds_each_providers_ranges() -> None:
    assert get_provider("anthropic").temperature_range == (0.0, 1.0)
    for provider in providers():
        low, high = provider.temperature_range
        assert 0.0 == low < high <= 2.0, provider.id
        assert provider.max_tokens_range[0] == 1, provider.id
    assert get_provider("openai").temperature_range == (0.0, 2.0)


@pytest.mark.parametrize(
    ("flag", "value", "said"),
    [
        ("--temperature", "2.5", "temperature 2.5 is outside Groq's range, 0 to 2"),
        ("--temperature", "-0.1", "temperature -0.1 is outside Groq's range, 0 to 2"),
        ("--temperature", "nan", "temperature nan is outside Groq's range, 0 to 2"),
        ("--max-tokens", "-5", "max tokens -5 is outside Groq's range, 1 to 1,000,000"),
        ("--max-tokens", "0", "max tokens 0 is outside Groq's range, 1 to 1,000,000"),
    ],
)
def test_ask_refuses_an_out_of_range_setting_with_exit_2_and_sends_nothing(
    server: ProviderServer, flag: str, value: str, said: str
) -> None:
    result = run_cli("ask", "-p", "groq", flag, value, "hi", env=groq_env(server))
    assert result.returncode == 2, result.stderr
    assert said in result.stderr
    assert server.requests == []


def test_ask_sends_the_max_tokens_given_as_it_is(server: ProviderServer) -> None:
    server.reply_with(openai_reply("ok"))
    result = run_cli("ask", "-p", "groq", "--max-tokens", "7", "hi", env=groq_env(server))
    assert result.returncode == 0, result.stderr
    assert server.requests[0].json[get_provider("groq").token_param] == 7


def test_anthropic_temperature_above_1_is_refused_never_lowered(server: ProviderServer) -> None:
    result = run_cli(
        "ask", "-p", "anthropic", "--temperature", "1.5", "hi", env=anthropic_env(server)
    )
    assert result.returncode == 2, result.stderr
    assert "temperature 1.5 is outside Anthropic's range, 0 to 1" in result.stderr
    assert server.requests == []


async def test_the_client_itself_refuses_an_out_of_range_request(server: ProviderServer) -> None:
    client = client_for("anthropic", server, open_key_store(app_paths()))
    with pytest.raises(SettingOutOfRangeError, match="outside Anthropic's range, 0 to 1"):
        await collect(client, "anthropic", chat("claude-sonnet-4-6", temperature=1.5))
    assert server.requests == []


def test_bot_add_refuses_a_temperature_outside_the_providers_range() -> None:
    result = run_cli("bot", "add", "Hot", "-p", "anthropic", "--temperature", "1.5")
    assert result.returncode == 2, result.stderr
    assert "outside Anthropic's range, 0 to 1" in result.stderr
    assert "Hot" not in run_cli("bot", "list").stdout


def test_a_share_link_with_a_temperature_outside_its_providers_range_is_refused() -> None:
    link = encode_bot_link(BotConfig("Hot", "anthropic", "claude-sonnet-4-6", "", 1.5))
    result = run_cli("bot", "import", link)
    assert result.returncode != 0
    assert "outside Anthropic's range, 0 to 1" in result.stderr
    with pytest.raises(BotInputError, match="max tokens 0 is outside OpenAI's range"):
        check_bot_fields(json.loads(json.dumps({**_fields("openai"), "max_tokens": 0})))


def _fields(provider: str) -> dict[str, object]:
    return {"name": "B", "provider": provider, "model": "m", "system_prompt": ""}


async def test_a_saved_bot_out_of_range_gets_an_error_block_and_no_request(
    server: ProviderServer,
) -> None:
    store = open_store(open_services())
    store.default_bot("anthropic", "claude-sonnet-4-6")
    bot = store.bot("Default")
    store.update_bot(bot.id, BotConfig("Default", "anthropic", "claude-sonnet-4-6", "", 1.5))
    open_key_store(app_paths()).set(entry_name("anthropic"), ANTHROPIC_KEY)
    env = {"BYOK_TUI_ANTHROPIC_BASE_URL": base_for(get_provider("anthropic"), server)}
    app = make_app(**env)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "warm?")
        await wait_for(pilot, lambda: bool(error_texts(app)))
        assert "temperature 1.5 is outside Anthropic's range, 0 to 1" in error_texts(app)[0]
        assert user_messages(app) == ["warm?"]  # what was typed is kept
    assert server.requests == []


async def test_the_config_pane_says_why_a_temperature_is_not_saved() -> None:
    store = open_store(open_services())
    store.default_bot("openai", "gpt-5.4-mini")
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        field = app.screen.query_one("#bot-temperature", Input)
        warning = app.screen.query_one("#bot-temperature-warning", Static)
        field.value = "2.5"
        await pilot.pause()
        assert "OpenAI accepts 0 to 2" in str(warning.render())
        assert warning.has_class("shown")
        field.value = "warm"
        await pilot.pause()
        assert "a number" in str(warning.render())
        field.value = "1.5"
        await pilot.pause()
        assert not warning.has_class("shown")
        await wait_for(pilot, lambda: store.bot("Default").config.temperature == 1.5)
        # Anthropic's range ends at 1: the same 1.5 is now out of range, said, and not saved.
        app.screen.query_one("#bot-provider", Select).value = "anthropic"
        await pilot.pause()
        assert "Anthropic accepts 0 to 1" in str(warning.render())
        await pilot.pause(0.3)
        app.context.writer.wait_idle()
    saved = open_store(open_services()).bot("Default").config
    assert (saved.provider, saved.temperature) == ("openai", 1.5)
