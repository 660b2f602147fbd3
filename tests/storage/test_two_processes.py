"""Two byok-tui processes share one database and lose nothing: the running app and the CLI
commands that open the database, taking turns, as a user with two terminals would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.storage.store import Store
from tests.support.cli import run_cli
from tests.support.pilot import CLOSED_PORT
from tests.support.provider_server import Reply, Seen, openai_reply, provider_server

pytestmark = pytest.mark.serial  # timed against real processes: alone, not beside others

KEY = "sk-proj-" + "T" * 60


def answer(_request: Seen) -> Reply:
    return openai_reply("noted")


class AppProcess:
    """The real app (tests/support/app_process.py) in its own process."""

    def __init__(self, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.app_process"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self._answer() == "ready"

    def _answer(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        assert line, f"the app process ended (status {self.process.poll()})"
        return line

    def send(self, text: str) -> str:
        assert self.process.stdin is not None
        self.process.stdin.write(f"send {text}\n")
        self.process.stdin.flush()
        return self._answer()

    def quit(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("quit\n")
        self.process.stdin.flush()
        assert self._answer() == "quit"
        assert self.process.wait(timeout=30) == 0

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)


@pytest.fixture
def app_process() -> Iterator[tuple[AppProcess, list[Seen]]]:
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    with provider_server(answer) as server:
        env = {
            **os.environ,
            "OLLAMA_HOST": CLOSED_PORT,
            "BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1",
        }
        app = AppProcess(env)
        try:
            yield app, server.requests
        finally:
            app.kill()


def database_files(database: Path) -> dict[str, int]:
    """The database's files that exist now, with their inode numbers."""
    names = (database, Path(f"{database}-wal"), Path(f"{database}-shm"))
    return {path.name: path.stat().st_ino for path in names if path.exists()}


def stored_user_messages(database: Path) -> list[str]:
    store = Store(database)
    return [
        message.content
        for bot in store.bots()
        for conversation in store.conversations(bot.id)
        for message in store.messages(conversation.id)
        if message.role == "user"
    ]


def test_the_cli_beside_the_running_app_deletes_no_file_and_loses_no_write(
    app_process: tuple[AppProcess, list[Seen]], tmp_path: Path
) -> None:
    app, requests = app_process
    database = app_paths().data_dir / "byok-tui.sqlite3"
    assert app.send("first message") == "ok 1"
    files = database_files(database)
    assert set(files) == {database.name, f"{database.name}-wal", f"{database.name}-shm"}

    export = tmp_path / "export.json"
    cli_turns = [
        ("bot", "list"),
        ("export", str(export)),
        ("bot", "add", "Second", "-p", "openai"),
        ("import", str(export)),
        ("bot", "share", "Second"),
    ]
    for number, command in enumerate(cli_turns, start=2):
        result = run_cli(*command)
        assert result.returncode == 0, result.stderr
        # The running app's files are the ones it has open: none deleted or replaced.
        assert database_files(database) == files, f"after `byok-tui {' '.join(command)}`"
        assert app.send(f"message {number}") == f"ok {number}"

    # What the app wrote between the CLI's turns, the CLI reads.
    exported = json.loads(run_cli("export").stdout)
    contents = [m["content"] for c in exported["conversations"] for m in c["messages"]]
    expected = ["first message", *(f"message {n}" for n in range(2, len(cli_turns) + 2))]
    assert [c for c in contents if c != "noted"] == expected
    app.quit()

    # And everything is still there once both have gone.
    assert stored_user_messages(database) == expected
    assert len(requests) == len(expected)
