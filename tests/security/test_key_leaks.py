"""Every place a key could leak to, checked with keys of all kinds set: global (stored),
per-bot, environment. Logs and crash reports have their own files beside this one."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.paths import app_paths
from byok_tui.core.records import BotConfig
from byok_tui.storage.share import encode_bot_link
from tests.support.cli import run_cli
from tests.support.keys import ENV_KEY, FAKE_KEYS, PER_BOT_KEY
from tests.support.pilot import error_texts, make_app, replies, send, settle, wait_for
from tests.support.provider_server import Reply, openai_reply, provider_server

GLOBAL_KEYS = {p: k for p, k in FAKE_KEYS.items() if p != "openai"}
ALL_KEYS = (*GLOBAL_KEYS.values(), PER_BOT_KEY, ENV_KEY)


def set_every_kind_of_key() -> None:
    for provider_id, key in GLOBAL_KEYS.items():
        assert run_cli("keys", "set", provider_id, stdin=key).returncode == 0
    assert run_cli("bot", "add", "Mine", "-p", "groq").returncode == 0
    assert run_cli("bot", "key", "Mine", stdin=PER_BOT_KEY).returncode == 0


def test_no_file_but_the_key_store_and_the_bots_k_field_holds_a_key(tmp_path: Path) -> None:
    set_every_kind_of_key()
    with provider_server() as server:
        server.reply_with(openai_reply(f"echo of {FAKE_KEYS['groq']}?"))
        env = {
            "BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1",
            "BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1",
            "OPENAI_API_KEY": ENV_KEY,
        }
        assert run_cli("ask", "--bot", "Mine", "hello", env=env).returncode == 0
        assert run_cli("ask", "-p", "openai", "hello", env=env).returncode == 0
        server.reply_with(
            Reply(headers={"content-type": "application/json"}, steps=[b'{"data":[{"id":"m1"}]}'])
        )
        assert run_cli("models", "--refresh", "-p", "groq", env=env).returncode == 0
        assert (
            run_cli(
                "--log", str(app_paths().log_dir / "debug.log"), "keys", "list", env=env
            ).returncode
            == 0
        )
    run_cli("export", str(tmp_path / "export.json"))
    home = app_paths().keys_file.parent.parent
    database = app_paths().data_dir / "byok-tui.sqlite3"
    leaks = []
    for path in home.rglob("*"):
        if not path.is_file():
            continue
        data = path.read_bytes()
        for key in ALL_KEYS:
            if key.encode() in data and path != app_paths().keys_file:
                leaks.append(f"{path.relative_to(home)} holds {key[:6]}…")
    # The per-bot key is in the database, in the bot's k field, and only there.
    allowed = {
        f"{p.relative_to(home)} holds {PER_BOT_KEY[:6]}…"
        for p in (database, Path(f"{database}-wal"))
        if p.exists()
    }
    assert [leak for leak in leaks if leak not in allowed] == []
    store = open_store(open_services())
    bot = store.bot("Mine")
    assert store.bot_key(bot.id) == PER_BOT_KEY
    for conversation in store.conversations(bot.id):
        for message in store.messages(conversation.id):
            assert PER_BOT_KEY not in repr(message)
    assert FAKE_KEYS["groq"] not in (tmp_path / "export.json").read_text()


def test_a_crash_inside_a_provider_call_prints_and_saves_no_key() -> None:
    set_every_kind_of_key()
    with provider_server() as server:
        server.reply_with(openai_reply())
        env = dict(os.environ, BYOK_TUI_GROQ_BASE_URL=f"{server.base_url}/openai/v1")
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "tests.support.crashing_provider",
                "ask",
                "--bot",
                "Mine",
                "hello",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
    output = result.stdout + result.stderr
    assert result.returncode == 1
    assert "RuntimeError: adapter bug" in output
    for key in ALL_KEYS:
        assert key not in output
    [report] = app_paths().crash_dir.glob("crash-*.txt")
    for key in ALL_KEYS:
        assert key not in report.read_text()


def test_a_key_goes_only_to_its_own_providers_server() -> None:
    set_every_kind_of_key()
    with contextlib.ExitStack() as stack:
        servers = {
            pid: stack.enter_context(provider_server()) for pid in ("openai", "groq", "mistral")
        }
        for server in servers.values():
            server.reply_with(openai_reply())
        env = {
            "BYOK_TUI_OPENAI_BASE_URL": f"{servers['openai'].base_url}/v1",
            "BYOK_TUI_GROQ_BASE_URL": f"{servers['groq'].base_url}/openai/v1",
            "BYOK_TUI_MISTRAL_BASE_URL": f"{servers['mistral'].base_url}/v1",
            "OPENAI_API_KEY": ENV_KEY,
        }
        assert run_cli("ask", "-p", "groq", "to groq", env=env).returncode == 0
        assert run_cli("ask", "--bot", "Mine", "to groq, per-bot", env=env).returncode == 0
        assert run_cli("ask", "-p", "mistral", "to mistral", env=env).returncode == 0
        seen = {pid: [r.header("authorization") for r in s.requests] for pid, s in servers.items()}
    assert seen == {
        "openai": [],
        "groq": [f"Bearer {FAKE_KEYS['groq']}", f"Bearer {PER_BOT_KEY}"],
        "mistral": [f"Bearer {FAKE_KEYS['mistral']}"],
    }


def test_an_imported_bot_cannot_send_a_key_to_its_own_host() -> None:
    set_every_kind_of_key()
    with provider_server() as evil, provider_server() as real:
        real.reply_with(openai_reply())
        payload = BotConfig("Trojan", "groq", "llama-3.3-70b-versatile")
        link = encode_bot_link(payload)
        import base64
        import json

        data = json.loads(base64.urlsafe_b64decode(link.split("c=")[1] + "=="))
        data.update(base_url=f"{evil.base_url}/v1", headers={"x-steal": "1"}, host="127.0.0.1")
        hostile = "byok-tui://bot?v=1&c=" + base64.urlsafe_b64encode(
            json.dumps(data).encode()
        ).decode().rstrip("=")
        assert run_cli("bot", "import", hostile).returncode == 0
        env = {"BYOK_TUI_GROQ_BASE_URL": f"{real.base_url}/openai/v1"}
        assert run_cli("ask", "--bot", "Trojan", "hi", env=env).returncode == 0
        assert evil.requests == []
        assert real.requests[0].header("authorization") == f"Bearer {FAKE_KEYS['groq']}"
        assert real.requests[0].header("x-steal") is None


def test_no_key_is_ever_on_a_command_line() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "byok_tui", "keys", "set", "groq"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        command_line = Path(f"/proc/{proc.pid}/cmdline").read_bytes()
    finally:
        proc.communicate(FAKE_KEYS["groq"] + "\n", timeout=30)
    assert FAKE_KEYS["groq"].encode() not in command_line
    assert proc.returncode == 0
    refused = run_cli("keys", "set", "groq", FAKE_KEYS["groq"])
    assert refused.returncode == 2  # a key given as an argument is not accepted


async def test_the_clipboard_and_the_title_never_carry_a_key() -> None:
    run_cli("keys", "set", "openai", stdin=FAKE_KEYS["openai"])
    with provider_server() as server:
        server.reply_with(openai_reply(f"you sent {FAKE_KEYS['openai']}"))
        app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(pilot)
            await send(pilot, "hi")
            await wait_for(pilot, lambda: len(replies(app)) == 1)
            await settle(pilot)
            await pilot.press("ctrl+t")
            assert FAKE_KEYS["openai"] not in app.clipboard
            assert "[REDACTED]" in app.clipboard
            assert FAKE_KEYS["openai"] not in f"{app.title} {app.sub_title}"


async def test_an_error_that_echoes_the_key_is_neither_shown_nor_stored() -> None:
    odd = "odd-key-with-no-known-shape-9f3"  # only the remembered-key layer can catch it
    run_cli("keys", "set", "openai", stdin=odd)
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {odd}"}}).encode()
    with provider_server() as server:
        server.reply_with(Reply(401, {"content-type": "application/json"}, [body]))
        env = {"BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1"}
        printed = run_cli("ask", "-p", "openai", "hi", env=env)
        assert printed.returncode == 4
        assert odd not in printed.stderr
        app = make_app(**env)
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(pilot)
            await send(pilot, "hi again")
            await wait_for(pilot, lambda: bool(error_texts(app)))
            assert "Incorrect API key provided" in error_texts(app)[-1]
            assert odd not in " ".join(error_texts(app))
    database = app_paths().data_dir / "byok-tui.sqlite3"
    for path in (database, Path(f"{database}-wal")):
        if path.exists():
            assert odd.encode() not in path.read_bytes()


def database_bytes() -> bytes:
    database = app_paths().data_dir / "byok-tui.sqlite3"
    return b"".join(
        path.read_bytes() for path in (database, Path(f"{database}-wal")) if path.exists()
    )


async def test_a_key_in_a_first_message_is_not_kept_as_its_conversations_title() -> None:
    from textual.widgets import OptionList

    from byok_tui.screens.dialogs import ConfirmDialog

    key = FAKE_KEYS["openai"]
    run_cli("keys", "set", "openai", stdin=key)
    with provider_server() as server:
        server.reply_with(openai_reply())
        app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(pilot)
            await send(pilot, f"{key} is my key")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
            await pilot.click("#yes")  # Send anyway
            await wait_for(pilot, lambda: replies(app) == ["ok"])
            await settle(pilot)
            titles = app.screen.query_one("#conversations", OptionList)
            shown = " ".join(
                str(titles.get_option_at_index(i).prompt) for i in range(titles.option_count)
            )
            assert not any(key[i : i + 20] in shown for i in range(len(key) - 19))
            assert "[REDACTED] is my key" in shown
    assert key.encode() not in database_bytes()
    exported = run_cli("export").stdout
    assert key not in exported
    assert "[REDACTED] is my key" in exported


def test_a_key_in_an_asked_prompt_is_not_kept_as_its_title() -> None:
    key = FAKE_KEYS["groq"]  # shaped like a key, but stored nowhere: only its shape tells
    with provider_server() as server:
        server.reply_with(openai_reply())
        env = {
            "BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1",
            "GROQ_API_KEY": "gsk_" + "e" * 52,
        }
        result = run_cli("ask", "-p", "groq", "--allow-secrets", f"use {key} please", env=env)
        assert result.returncode == 0, result.stderr
    store = open_store(open_services())
    titles = [c.title for b in store.bots() for c in store.conversations(b.id)]
    assert titles == ["use [REDACTED] please"]


def test_the_export_removes_key_shaped_text_not_only_keys_stored_today() -> None:
    """A key that was deleted from the key store (or never stored) still has a key's shape."""
    gone = FAKE_KEYS["anthropic"]
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, "about keys")
    store.add_message(conversation.id, "user", f"my old key was {gone}")
    store.close()
    exported = run_cli("export").stdout
    assert gone not in exported
    assert "my old key was [REDACTED]" in exported


def test_a_long_provider_error_ending_in_the_key_leaks_no_piece_of_it_anywhere() -> None:
    """The message is redacted before it is cut to length: a cut key is still a key."""
    key = "odd-mistral-key-value-0123456789"  # 32 characters, of no known shape
    run_cli("keys", "set", "mistral", stdin=key)
    body = json.dumps({"error": {"message": "x" * 470 + " " + key}}).encode()
    with provider_server() as server:
        server.reply_with(Reply(401, {"content-type": "application/json"}, [body]))
        env = {"BYOK_TUI_MISTRAL_BASE_URL": f"{server.base_url}/v1"}
        printed = run_cli("ask", "-p", "mistral", "hi", env=env)
    assert printed.returncode == 4
    pieces = [key[i : i + 12] for i in range(len(key) - 11)]
    exported = run_cli("export").stdout
    for place, text in (("ask", printed.stderr + printed.stdout), ("export", exported)):
        assert not any(piece in text for piece in pieces), place
    assert not any(piece.encode() in database_bytes() for piece in pieces)


def echo_split(key: str, before: str = "your key is ", after: str = ", right?") -> Reply:
    """A reply that echoes `key` cut across three streamed pieces."""
    cut = len(key) // 3
    texts = [before + key[:cut], key[cut : 2 * cut], key[2 * cut :] + after]
    return openai_reply(*texts)


def test_ask_never_prints_a_key_the_reply_echoes_even_split_across_pieces() -> None:
    key = "my-own-gateway-key-" + "9" * 30  # of no known shape: only the known-key layer
    run_cli("keys", "set", "openai", stdin=key)
    with provider_server() as server:
        server.reply_with(echo_split(key))
        env = {"BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1"}
        printed = run_cli("ask", "-p", "openai", "what is my key?", env=env)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == "your key is [REDACTED], right?\n"


async def test_the_transcript_never_shows_a_key_the_reply_echoes() -> None:
    key = "my-own-gateway-key-" + "9" * 30
    run_cli("keys", "set", "openai", stdin=key)
    with provider_server() as server:
        server.reply_with(echo_split(key))
        app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(pilot)
            await send(pilot, "what is my key?")
            await wait_for(pilot, lambda: bool(replies(app)) and replies(app)[0].endswith("right?"))
            assert replies(app) == ["your key is [REDACTED], right?"]
