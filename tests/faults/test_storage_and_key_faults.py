"""Faults around storage and keys: each gives a clear error, and nothing typed is lost."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.storage import db as db_module
from byok_tui.storage.database import StorageError
from byok_tui.storage.store import Store
from byok_tui.widgets.composer import Composer
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    chat,
    error_texts,
    make_app,
    replies,
    send,
    settle,
    wait_for,
)
from tests.support.provider_server import Reply, provider_server, sse

KEY = "sk-proj-" + "F" * 60
DONE = sse(
    {"choices": [{"index": 0, "delta": {"content": "fine"}, "finish_reason": "stop"}]}, done=True
)


def fill_the_disk(store: Store) -> None:
    """A real SQLITE_FULL: the database may not grow by a single page any more, through
    any of the store's connections (each thread has its own; a full disk is full for all)."""
    pages = store.connection().execute("PRAGMA page_count").fetchone()[0]
    connection_of_this_thread = store.connection

    def full() -> sqlite3.Connection:
        connection = connection_of_this_thread()
        connection.execute(f"PRAGMA max_page_count = {pages}")
        return connection

    store.connection = full  # type: ignore[method-assign]


def test_a_full_disk_is_a_clear_error_naming_the_database() -> None:
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, "t")
    fill_the_disk(store)
    with pytest.raises(StorageError) as raised:
        for _ in range(200):
            store.add_message(conversation.id, "user", "x" * 4000)
    assert "the disk is full" in str(raised.value)
    assert str(store.path) in str(raised.value)
    assert "Free some disk space" in raised.value.remedy


async def test_when_the_disk_is_full_the_app_keeps_the_message_in_the_composer() -> None:
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    with provider_server() as server:
        server.reply_with(Reply(steps=DONE))
        app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
            await settle(pilot)
            store = app.context.db
            bot = store.bots()[0]
            conversation = store.create_conversation(bot.id, "t")
            chat(app).state.conversation = conversation  # type: ignore[union-attr]
            # Fill the disk, then grow past it.
            fill_the_disk(store)
            await send(pilot, "x" * 20_000)
            await wait_for(pilot, lambda: bool(error_texts(app)))
            assert "the disk is full" in error_texts(app)[0]
            assert chat(app).query_one(Composer).text == "x" * 20_000
        assert server.requests == []


HOLDER = textwrap.dedent(
    """
    import sqlite3, sys, time
    connection = sqlite3.connect(sys.argv[1], isolation_level=None)
    connection.execute("BEGIN EXCLUSIVE")
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    connection.execute("COMMIT")
    """
)


def test_a_database_locked_by_another_process_is_a_clear_error_then_works(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, "t")
    monkeypatch.setattr(db_module, "BUSY_TIMEOUT_MS", 300)
    impatient = Store(store.path)  # a fresh connection with the short timeout
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(store.path), "2"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(StorageError) as raised:
            impatient.add_message(conversation.id, "user", "while locked")
        assert "another program holds it locked" in str(raised.value)
    finally:
        holder.wait(timeout=30)
    impatient.add_message(conversation.id, "user", "after the lock")
    assert [m.content for m in impatient.messages(conversation.id)] == ["after the lock"]


@pytest.mark.parametrize("fault", ["corrupt", "missing", "replaced"])
async def test_the_key_file_changing_under_the_running_app(fault: str) -> None:
    keys = open_key_store(app_paths())
    keys.set(entry_name("openai"), KEY)
    replacement = "sk-proj-" + "R" * 60
    with provider_server() as server:
        server.reply_with(Reply(steps=DONE))
        app = make_app(BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1")
        async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
            await settle(pilot)
            keys_file = app_paths().keys_file
            if fault == "corrupt":
                keys_file.write_text("{ garbage")
            elif fault == "missing":
                keys_file.unlink()
            else:
                replaced = keys_file.with_name("new.json")
                replaced.write_text(json.dumps({"app-apikey-openai": replacement}))
                replaced.replace(keys_file)
            await send(pilot, "still there?")
            if fault == "replaced":
                await wait_for(pilot, lambda: replies(app) == ["fine"])
                assert server.requests[0].header("authorization") == f"Bearer {replacement}"
                return
            await wait_for(pilot, lambda: bool(error_texts(app)))
            expected = "cannot read the key file" if fault == "corrupt" else "No API key"
            assert expected in error_texts(app)[0]
            assert server.requests == []
            # Fixing the file and retrying sends the same message.
            keys_file.write_text(json.dumps({"app-apikey-openai": KEY}))
            await pilot.press("ctrl+r")
            await wait_for(pilot, lambda: replies(app)[-1:] == ["fine"])
        assert server.requests[0].json["messages"][-1]["content"] == "still there?"


async def test_a_keyring_that_raises_leaves_the_app_usable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BYOK_TUI_KEYSTORE", "keyring")
    monkeypatch.setenv("BYOK_TEST_KEYRING_FAIL", "1")
    app = make_app()
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "hello")
        await wait_for(pilot, lambda: bool(error_texts(app)))
        assert any("keyring could not read" in e for e in error_texts(app))
        assert app.is_running


def test_a_full_disk_when_the_database_is_created_is_not_called_damaged(tmp_path) -> None:
    """A real full disk: the data folder on a 16 KB file system (a tmpfs mounted in a user
    namespace of the test's own, so no privilege is needed), where the new database's first
    pages do not fit. SQLite says SQLITE_FULL; byok-tui must say so."""
    import os
    import shutil

    home = tmp_path / "tiny"
    home.mkdir()
    unshare, shell = shutil.which("unshare"), shutil.which("sh")
    if unshare is None or shell is None:
        pytest.skip("this machine has no unshare to mount a small file system with")
    mount = [unshare, "-rm", shell, "-c", f"mount -t tmpfs -o size=16k none {home}"]
    if subprocess.run(mount, check=False).returncode != 0:
        pytest.skip("this machine cannot mount a small file system in a user namespace")
    command = f'mount -t tmpfs -o size=16k none {home} && exec "$@"'
    result = subprocess.run(
        [
            unshare,
            "-rm",
            shell,
            "-c",
            command,
            "sh",
            sys.executable,
            "-m",
            "byok_tui",
            "bot",
            "list",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "BYOK_TUI_HOME": str(home)},
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert "the disk is full" in result.stderr
    assert "damaged" not in result.stderr and "move the file aside" not in result.stderr.lower()
    assert "Free some disk space" in result.stderr


@pytest.mark.parametrize(
    ("code", "said", "not_said"),
    [
        (sqlite3.SQLITE_FULL, "the disk is full", "damaged"),
        (sqlite3.SQLITE_READONLY, "read-only", "damaged"),
        (sqlite3.SQLITE_IOERR, "input/output error", "damaged"),
        (sqlite3.SQLITE_CORRUPT, "damaged", "disk is full"),
        (sqlite3.SQLITE_NOTADB, "not an SQLite database", "disk is full"),
    ],
)
def test_each_way_the_database_can_fail_to_open_says_what_it_is(
    code: int, said: str, not_said: str
) -> None:
    from byok_tui.storage.db import database_problem

    error = sqlite3.OperationalError("as SQLite says it")
    error.sqlite_errorcode = code  # type: ignore[attr-defined]
    problem, _remedy = database_problem(error)
    assert said in problem and not_said not in problem


def test_a_read_only_database_when_saving_is_said_so_not_a_failure_of_unknown_kind() -> None:
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, "t")
    store.connection().execute("PRAGMA query_only = ON")  # SQLite's own SQLITE_READONLY
    with pytest.raises(StorageError) as raised:
        store.add_message(conversation.id, "user", "hello")
    assert "read-only file system" in str(raised.value)
    assert "nothing typed is lost" in raised.value.remedy
