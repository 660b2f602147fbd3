"""A model id is sent to the provider and stored in clear: one that holds one of the user's
keys, or anything shaped like a key, is refused wherever a model id is given (the shell, the
config pane's typed id, a bot, a provider definition), with a message that never shows it."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Select

from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.config import ConfigError
from byok_tui.core.errors import ByokError
from byok_tui.core.records import BotConfig
from byok_tui.core.redaction import model_id_problem, remember_secret
from byok_tui.providers.custom import parse_definition
from byok_tui.screens.dialogs import TextDialog
from tests.support.cli import run_cli
from tests.support.pilot import chat, make_app, settle, state, wait_for
from tests.support.provider_server import ProviderServer, openai_reply

OPENAI_KEY = "sk-proj-" + "Mq7" * 16 + "x9Zk"
SHAPELESS = "Zq8vXw2mNp4rTs6uKy1bLc3dFg5hJ7kA"  # mixed case and digits, no separators


@pytest.mark.parametrize("model", [OPENAI_KEY, f"gpt-5.5/{OPENAI_KEY}", SHAPELESS])
def test_a_model_id_that_looks_like_a_key_has_a_problem(model: str) -> None:
    problem = model_id_problem(model)
    assert problem is not None and "looks like an API key" in problem
    assert OPENAI_KEY[8:20] not in problem


@pytest.mark.parametrize(
    "model",
    [
        "gpt-5.5",
        "claude-opus-4-1-20250805",
        "meta-llama/Llama-3.3-70B-Instruct-Turbo",
        "accounts/fireworks/models/llama-v3p1-405b-instruct",
        "qwen2.5-coder:32b-instruct-q4_K_M",
        "models/gemini-3.8-flash",
    ],
)
def test_real_model_ids_have_no_problem(model: str) -> None:
    assert model_id_problem(model) is None


def test_a_stored_key_of_no_known_shape_as_a_model_id_is_refused() -> None:
    own = "tgk-lowercase-only-" + "q" * 30
    remember_secret(own)
    assert model_id_problem(own) is not None


def test_ask_refuses_a_key_given_as_the_model_and_sends_and_stores_nothing(
    server: ProviderServer,
) -> None:
    groq = {
        "BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1",
        "GROQ_API_KEY": "gsk_" + "G" * 52,
    }
    server.reply_with(openai_reply("hi"))
    asked = run_cli("ask", "-p", "groq", "-m", OPENAI_KEY, "hi", env=groq)
    assert asked.returncode == 2
    assert "looks like an API key" in asked.stderr
    assert OPENAI_KEY[8:20] not in asked.stderr + asked.stdout
    assert server.requests == []
    for command in (("usage",), ("bot", "list"), ("export",)):
        shown = run_cli(*command)
        assert OPENAI_KEY[8:20] not in shown.stdout + shown.stderr, command


def test_bot_add_and_edit_refuse_a_key_as_the_model() -> None:
    added = run_cli("bot", "add", "Coder", "-p", "groq", "-m", OPENAI_KEY)
    assert added.returncode == 2 and "looks like an API key" in added.stderr
    assert run_cli("bot", "add", "Coder", "-p", "groq").returncode == 0
    edited = run_cli("bot", "edit", "Coder", "-m", OPENAI_KEY)
    assert edited.returncode == 2 and OPENAI_KEY[8:20] not in edited.stderr


def test_the_store_refuses_a_bot_whose_model_is_a_key() -> None:
    store = open_store(open_services())
    with pytest.raises(ByokError, match="looks like an API key"):
        store.create_bot(BotConfig(name="X", provider="groq", model=OPENAI_KEY))


def test_a_provider_definition_listing_a_key_as_a_model_is_refused() -> None:
    table = {"kind": "openai-compatible", "base_url": "https://x.example/v1", "models": [SHAPELESS]}
    with pytest.raises(ConfigError, match="looks like an API key"):
        parse_definition("mine", table, "config.toml")


async def test_a_key_typed_as_the_model_id_in_the_pane_is_not_saved() -> None:
    """The typed model id sits right under the key field: a key typed there is refused with
    a message, and the bot keeps its model."""
    from byok_tui.widgets.config_pane import TYPE_A_MODEL_ID

    store = open_store(open_services())
    store.default_bot("openai", "gpt-5.5")
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        models = chat(app).query_one("#bot-model", Select)
        models.value = TYPE_A_MODEL_ID
        await wait_for(pilot, lambda: isinstance(app.screen, TextDialog))
        app.screen.query_one(Input).value = OPENAI_KEY
        await pilot.press("enter")
        await settle(pilot)
        shown = [n.message for n in app._notifications]
        assert any("looks like an API key" in m for m in shown), shown
        assert models.value == "gpt-5.5" and state(app).bot.config.model == "gpt-5.5"
        app.context.writer.wait_idle()
    assert store.bot("Default").config.model == "gpt-5.5"
