"""Files byok-tui writes at a path the user names (exports) are private from their first
byte, replaced whole, and never written through a symlink or into anything but a regular
file: a planted link must not make an export overwrite the key file, and a FIFO must not
hang it."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from byok_tui.core.paths import app_paths, write_private
from byok_tui.keys import entry_name
from tests.support.cli import run_cli

KEY = "sk-proj-" + "F" * 60
EXPORTS = [(), ("--markdown",)]


@pytest.fixture(autouse=True)
def a_conversation() -> None:
    """Something for the Markdown export to write."""
    from byok_tui.app_services.services import open_services, open_store

    store = open_store(open_services())
    conversation = store.create_conversation(store.default_bot("groq", "llama").id, "Notes")
    store.add_message(conversation.id, "user", "hello")
    store.close()


@pytest.mark.parametrize("how", EXPORTS, ids=["json", "markdown"])
def test_an_export_over_a_file_others_could_read_leaves_it_private(
    tmp_path: Path, how: tuple[str, ...]
) -> None:
    target = tmp_path / "export.out"
    target.write_text("old")
    target.chmod(0o644)
    result = run_cli("export", *how, str(target))
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert target.read_text() != "old"


@pytest.mark.parametrize("how", EXPORTS, ids=["json", "markdown"])
def test_an_export_never_writes_through_a_symlink(tmp_path: Path, how: tuple[str, ...]) -> None:
    key_file = app_paths().keys_file
    key_file.parent.mkdir(parents=True, exist_ok=True)
    key_file.write_text(json.dumps({entry_name("openai"): KEY}))
    before = key_file.read_bytes()
    link = tmp_path / "export.out"
    link.symlink_to(key_file)
    result = run_cli("export", *how, str(link))
    assert result.returncode != 0
    assert "symlink" in result.stderr
    assert key_file.read_bytes() == before, "an export overwrote the file a link pointed at"
    assert json.loads(before)[entry_name("openai")] == KEY


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_an_export_refuses_what_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "export.out"
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    result = run_cli("export", str(target), timeout=20)
    assert result.returncode != 0
    assert "not a regular file" in result.stderr


def test_write_private_replaces_whole_and_leaves_no_temp_file(tmp_path: Path) -> None:
    folder = tmp_path / "exports"
    folder.mkdir()
    target = folder / "out.json"
    write_private(target, b"first")
    write_private(target, b"second")
    assert target.read_bytes() == b"second"
    assert sorted(p.name for p in folder.iterdir()) == ["out.json"]
