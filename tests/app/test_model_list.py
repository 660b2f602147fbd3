"""The config pane's model list: the registry's models, every model a provider's own list
returned (Ollama's pulled models, a key's models found by Test key), and any id typed in."""

from __future__ import annotations

import json

from textual.widgets import Button, Input, Select

from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.screens.dialogs import TextDialog
from byok_tui.screens.settings import SettingsScreen
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    chat,
    make_app,
    replies,
    send,
    settle,
    state,
    wait_for,
)
from tests.support.provider_server import Reply, Seen, openai_reply, provider_server

KEY = "sk-proj-" + "M" * 60
JSON = {"content-type": "application/json"}
HOSTILE_NAME = "[@click=app.quit]evil[/]"


def ollama(request: Seen) -> Reply:
    if request.target == "/api/tags":
        tags = {
            "models": [{"name": "llama3.2:latest"}, {"name": "qwen3:8b"}, {"name": HOSTILE_NAME}]
        }
        return Reply(headers=JSON, steps=[json.dumps(tags).encode()])
    done = {"message": {"role": "assistant", "content": "local answer"}, "done": True}
    return Reply(
        headers={"content-type": "application/x-ndjson"}, steps=[json.dumps(done).encode() + b"\n"]
    )


def saved_model(app) -> str:  # type: ignore[no-untyped-def]
    app.context.writer.wait_idle()
    return open_store(open_services()).bot(state(app).bot.id).config.model


def model_options(app) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    select = chat(app).query_one("#bot-model", Select)
    return [(str(label), str(value)) for label, value in select._options]


async def test_ollamas_pulled_models_are_offered_and_used() -> None:
    store = open_store(open_services())
    store.default_bot("ollama", "llama3.2")
    with provider_server(ollama) as server:
        app = make_app(OLLAMA_HOST=server.base_url.removeprefix("http://"))
        async with app.run_test(size=(140, 45)) as pilot:
            await settle(pilot)
            await wait_for(pilot, lambda: "qwen3:8b" in dict(model_options(app)).values())
            labels = [label for label, _value in model_options(app)]
            assert HOSTILE_NAME in labels  # shown as the text it is, never run as markup
            chat(app).query_one("#bot-model", Select).value = "qwen3:8b"
            await settle(pilot)
            assert saved_model(app) == "qwen3:8b"
            await send(pilot, "hello local")
            await wait_for(pilot, lambda: replies(app) == ["local answer"])
            assert app.is_running
    chats = [r for r in server.requests if r.target == "/api/chat"]
    assert chats[0].json["model"] == "qwen3:8b"


def openai_models(request: Seen) -> Reply:
    if request.target == "/v1/models":
        body = {"data": [{"id": "gpt-5.5"}, {"id": "ft:gpt-5.5:acme:support"}]}
        return Reply(headers=JSON, steps=[json.dumps(body).encode()])
    return Reply(404, JSON, [b"{}"])


async def test_test_key_counts_one_model_as_one_model() -> None:
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    one = json.dumps({"data": [{"id": "gpt-5.5"}]}).encode()
    with provider_server(lambda _request: Reply(headers=JSON, steps=[one])) as server:
        app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 45)) as pilot:
            await settle(pilot)
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen))
            await pilot.click("#row-openai .test-key")
            result = "#row-openai .test-result"
            await wait_for(pilot, lambda: "✓" in str(app.screen.query_one(result).render()))
            assert "1 model available" in str(app.screen.query_one(result).render())


async def test_models_found_by_test_key_are_in_the_model_list_when_settings_closes() -> None:
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    with provider_server(openai_models) as server:
        app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
        async with app.run_test(size=(140, 45)) as pilot:
            await settle(pilot)
            assert "ft:gpt-5.5:acme:support" not in dict(model_options(app)).values()
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen))
            await pilot.click("#row-openai .test-key")
            await wait_for(
                pilot,
                lambda: (
                    "2 models available"
                    in str(app.screen.query_one("#row-openai .test-result").render())
                ),
            )
            await pilot.press("escape")
            await settle(pilot)
            assert "ft:gpt-5.5:acme:support" in dict(model_options(app)).values()


async def test_a_model_id_the_registry_has_never_heard_of_can_be_typed() -> None:
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    with provider_server() as server:
        server.reply_with(openai_reply("ok"))
        app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
        async with app.run_test(size=(140, 45)) as pilot:
            await settle(pilot)
            select = chat(app).query_one("#bot-model", Select)
            select.focus()
            await pilot.press("enter", "end", "enter")  # the list's last entry: type an id
            await wait_for(pilot, lambda: isinstance(app.screen, TextDialog))
            app.screen.query_one(Input).value = "gpt-6-preview-0101"
            await pilot.press("enter")
            await settle(pilot)
            assert saved_model(app) == "gpt-6-preview-0101"
            assert select.value == "gpt-6-preview-0101"
            await send(pilot, "hi")
            await wait_for(pilot, lambda: replies(app) == ["ok"])
    assert server.requests[0].json["model"] == "gpt-6-preview-0101"


async def test_cancelling_the_typed_model_id_keeps_the_model() -> None:
    app = make_app()
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        before = state(app).bot.config.model
        select = chat(app).query_one("#bot-model", Select)
        select.focus()
        await pilot.press("enter", "end", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, TextDialog))
        await pilot.press("escape")
        await settle(pilot)
        assert saved_model(app) == before
        assert select.value == before
        assert not app.screen.query(Button).filter("#yes")
