"""A prompt holding one of the user's keys, or anything key-shaped, is held for confirmation;
child processes get no provider keys."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from textual.widgets import Button

from byok_tui.core.child_env import child_environment
from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
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


def database_bytes() -> bytes:
    """Every byte the database keeps on disk: the file and its write-ahead log."""
    data_dir = app_paths().data_dir
    return b"".join(path.read_bytes() for path in sorted(data_dir.glob("byok-tui.sqlite3*")))


async def test_a_key_rotated_in_another_terminal_and_sent_anyway_is_stored_redacted() -> None:
    """The dialog promises the message is stored with the key replaced: that holds for a key
    set after the app started (by `keys set` in another terminal), in the messages and in the
    search index alike."""
    open_key_store(app_paths()).set(entry_name("groq"), KEY)
    rotated = "gsk_" + "R0tat3d" * 7 + "Qz"
    with provider_server() as server:
        server.reply_with(Reply(steps=DONE))
        app = make_app(BYOK_TUI_GROQ_BASE_URL=f"{server.base_url}/openai/v1")
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(pilot)
            assert run_cli("keys", "set", "groq", stdin=rotated).returncode == 0  # elsewhere
            await send(pilot, f"why does {rotated} fail?")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
            app.screen.query_one("#yes", Button).press()
            await wait_for(pilot, lambda: replies(app) == ["ok"])
            app.context.writer.wait_idle()
        assert len(server.requests) == 1
    assert rotated.encode() not in database_bytes()
    assert rotated[4:20].encode() not in database_bytes()


def test_what_is_deleted_leaves_no_text_in_the_databases_free_pages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whatever SQLite's build default (Debian's deletes securely, many others do not)."""
    import sqlite3

    from byok_tui.app_services.services import open_services, open_store

    real_connect = sqlite3.connect

    def insecure_by_default(*args, **kwargs):  # type: ignore[no-untyped-def]
        connection = real_connect(*args, **kwargs)
        connection.execute("PRAGMA secure_delete = OFF")
        return connection

    monkeypatch.setattr(sqlite3, "connect", insecure_by_default)

    store = open_store(open_services())
    bot = store.default_bot("groq", "llama")
    conversation = store.create_conversation(bot.id, "t")
    shaped = "gsk_" + "D3l3t3d" * 7 + "Qz"  # key-shaped, written on purpose: kept as typed
    store.add_message(conversation.id, "user", f"note {shaped} " + "x" * 5000)
    store.close()  # checkpointed: the text is in the database file itself
    assert shaped.encode() in database_bytes()
    store = open_store(open_services())
    store.delete_conversation(conversation.id)
    store.close()
    assert shaped.encode() not in database_bytes()
