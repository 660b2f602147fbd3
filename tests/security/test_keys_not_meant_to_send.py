"""A prompt holding one of the user's keys, or anything key-shaped, is held for confirmation;
child processes get no provider keys."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from textual.widgets import Button

from byok_tui.child_env import child_environment
from byok_tui.keys import entry_name, open_key_store
from byok_tui.paths import app_paths
from byok_tui.screens.dialogs import ConfirmDialog
from byok_tui.widgets.composer import Composer
from tests.support.cli import run_cli
from tests.support.keys import ENV_KEY, FAKE_KEYS
from tests.support.pilot import make_app, replies, send, settle, wait_for
from tests.support.provider_server import Reply, provider_server, sse

KEY = FAKE_KEYS["groq"]
ODD = "my-own-odd-key-without-shape"
DONE = sse(
    {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}, done=True
)


@pytest.mark.parametrize("secret", [ODD, FAKE_KEYS["anthropic"]], ids=["stored key", "shaped"])
def test_ask_refuses_a_prompt_with_a_key_unless_allowed(secret: str) -> None:
    assert run_cli("keys", "set", "groq", stdin=ODD).returncode == 0
    with provider_server() as server:
        server.reply_with(Reply(steps=DONE))
        env = {"BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1"}
        refused = run_cli("ask", "-p", "groq", f"is {secret} valid?", env=env)
        assert refused.returncode == 2
        assert "nothing was sent" in refused.stderr
        assert "--allow-secrets" in refused.stderr
        assert secret not in refused.stderr
        assert server.requests == []
        allowed = run_cli("ask", "-p", "groq", "--allow-secrets", f"is {secret} valid?", env=env)
        assert allowed.returncode == 0
        assert len(server.requests) == 1
        # Allowed: sent as typed (it is stored with the key replaced).
        sent = server.requests[0].json["messages"][-1]["content"]
        assert sent == f"is {secret} valid?"


async def test_the_app_holds_a_prompt_with_a_key_and_asks_first() -> None:
    open_key_store(app_paths()).set(entry_name("groq"), KEY)
    with provider_server() as server:
        server.reply_with(Reply(steps=DONE))
        app = make_app(BYOK_TUI_GROQ_BASE_URL=f"{server.base_url}/openai/v1")
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(pilot)
            await send(pilot, f"why does {KEY} fail?")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
            await pilot.click("#no")
            await pilot.pause()
            assert app.screen.query_one(Composer).text == f"why does {KEY} fail?"  # held
            assert server.requests == []
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
            app.screen.query_one("#yes", Button).press()
            await wait_for(pilot, lambda: replies(app) == ["ok"])
        assert len(server.requests) == 1


def test_a_child_process_gets_no_provider_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-odd-value-123")
    monkeypatch.setenv("MY_OWN_VARIABLE", FAKE_KEYS["anthropic"])
    monkeypatch.setenv("HARMLESS", "hello")
    env = child_environment()
    assert "OPENAI_API_KEY" not in env
    assert "GEMINI_API_KEY" not in env
    assert "MY_OWN_VARIABLE" not in env  # key-shaped value under another name
    assert env["HARMLESS"] == "hello"


async def test_the_external_editor_gets_no_keys_and_its_text_comes_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dump = tmp_path / "editor-env.json"
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import json, os, sys\n"
        f"json.dump(dict(os.environ), open({str(dump)!r}, 'w'))\n"
        "open(sys.argv[1], 'a').write(' (edited)')\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        app.screen.query_one(Composer).text = "draft"
        await pilot.press("f4")
        await pilot.pause()
        assert app.screen.query_one(Composer).text == "draft (edited)"
    seen = json.loads(dump.read_text())
    assert "OPENAI_API_KEY" not in seen
    assert ENV_KEY not in json.dumps(seen)
    assert os.environ["OPENAI_API_KEY"] == ENV_KEY  # our own environment is untouched
