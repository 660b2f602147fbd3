"""A question that needs a tool, end to end, on each of the four wire families: the model
(a loopback server speaking the family's own stream) asks for `test_weather`, the SDK's
stdio server answers it, the answer goes back in the family's own form, and the model's
next words are the reply; in `ask` (allowed with --allow-tool) and in the app (allowed in
the approval dialog, after seeing the arguments)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.paths import app_paths
from byok_tui.core.registry import get_provider
from byok_tui.keys import entry_name, open_key_store
from byok_tui.providers.endpoints import override_variable
from tests.providers.test_tool_calls_on_the_wire import (
    anthropic_calls,
    gemini_calls,
    ollama_calls,
    openai_calls,
)
from tests.support.cli import run_cli
from tests.support.pilot import WIDTH_WITHOUT_CONFIG_PANE, make_app, replies, send, settle, wait_for
from tests.support.provider_client import base_for
from tests.support.provider_server import Reply, Seen, provider_server, sse
from tests.tools.test_tools_in_the_app import REPO, SERVER, dialog, shown_text

RESULT = "Oslo: snow for 1 day(s), -4 C."
SAID = "Snow in Oslo, then."
FAMILIES = {  # provider: its model, a key of its shape (none for the local runtime)
    "openai": ("gpt-5.5", "sk-proj-" + "F" * 60),
    "anthropic": ("claude-sonnet-4-6", "sk-ant-api03-" + "F" * 40),
    "google": ("gemini-3.8-flash", "AIza" + "F" * 35),
    "ollama": ("qwen3:8b", None),
}


def calls(provider_id: str) -> Reply:
    name = "test_weather"
    return {
        "openai": lambda: openai_calls('{"city": ', '"Oslo"}', name=name),
        "anthropic": lambda: anthropic_calls('{"city"', ': "Oslo"}', name=name),
        "google": lambda: gemini_calls({"city": "Oslo"}, name=name),
        "ollama": lambda: ollama_calls({"city": "Oslo"}, name=name),
    }[provider_id]()


def says(provider_id: str, text: str) -> Reply:
    if provider_id == "openai":
        said = {"choices": [{"index": 0, "delta": {"content": text}}]}
        end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        return Reply(steps=sse(said, end, done=True))
    if provider_id == "anthropic":
        steps = sse({"type": "message_start", "message": {"usage": {"input_tokens": 5}}})
        block = {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}
        delta = {"type": "content_block_delta", "index": 0}
        steps += sse(block, {**delta, "delta": {"type": "text_delta", "text": text}})
        steps += sse({"type": "content_block_stop", "index": 0})
        steps += sse({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}})
        return Reply(steps=steps + sse({"type": "message_stop"}))
    if provider_id == "google":
        candidate = {
            "content": {"role": "model", "parts": [{"text": text}]},
            "finishReason": "STOP",
        }
        return Reply(steps=sse({"candidates": [candidate]}))
    lines = [
        {"message": {"role": "assistant", "content": text}, "done": False},
        {"message": {"content": ""}, "done": True, "done_reason": "stop"},
    ]
    return Reply(steps=[json.dumps(line).encode() + b"\n" for line in lines])


def model_for(provider_id: str) -> Any:
    """Calls the tool until its result is in the conversation, then answers with it."""

    def answer(seen: Seen) -> Reply:
        if seen.target.endswith("/api/tags"):  # the local runtime's probe: its models
            body = {"models": [{"name": FAMILIES["ollama"][0]}]}
            return Reply(
                headers={"content-type": "application/json"}, steps=[json.dumps(body).encode()]
            )
        if RESULT in json.dumps(seen.json):
            return says(provider_id, SAID)
        return calls(provider_id)

    return answer


def ready(provider_id: str) -> None:
    model, key = FAMILIES[provider_id]
    if key is not None:
        open_key_store(app_paths()).set(entry_name(provider_id), key)
    assert run_cli("mcp", "add", "test", "--cwd", str(REPO), "--", *SERVER).returncode == 0
    open_store(open_services()).default_bot(provider_id, model)
    assert run_cli("bot", "tools", "Default", "test:weather").returncode == 0


@pytest.mark.parametrize("provider_id", sorted(FAMILIES))
def test_ask_runs_an_allowed_tool_and_answers_with_its_result(provider_id: str) -> None:
    ready(provider_id)
    with provider_server(model_for(provider_id)) as server:
        env = {
            override_variable(get_provider(provider_id)): base_for(
                get_provider(provider_id), server
            )
        }
        done = run_cli(
            "ask", "--allow-tool", "test:weather", "Weather in Oslo?", env=env, timeout=120
        )
        chats = [r for r in server.requests if not r.target.endswith("/api/tags")]
    assert done.returncode == 0, done.stderr
    assert SAID in done.stdout
    assert len(chats) == 2
    assert RESULT in json.dumps(chats[1].json)


@pytest.mark.parametrize("provider_id", sorted(FAMILIES))
async def test_the_app_asks_shows_the_arguments_runs_the_tool_and_answers(provider_id: str) -> None:
    ready(provider_id)
    provider = get_provider(provider_id)
    with provider_server(model_for(provider_id)) as server:
        app = make_app(**{override_variable(provider): base_for(provider, server)})
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
            await settle(pilot)
            await send(pilot, "Weather in Oslo?")
            await wait_for(pilot, lambda: dialog(app) is not None, timeout=30)
            shown = dialog(app)
            assert shown is not None and '"Oslo"' in shown_text(shown)
            await pilot.press("a")
            await wait_for(pilot, lambda: any(SAID in r for r in replies(app)), timeout=30)
