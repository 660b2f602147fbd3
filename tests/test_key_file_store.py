"""The key file store: keys under their entry names, in a private, atomic, shared file."""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from byok_tui.core.paths import app_paths
from byok_tui.core.registry import get_provider
from byok_tui.keys import KeyFileCorruptError, KeyStoreError, entry_name, resolve_key
from byok_tui.keys.file_store import FileKeyStore
from tests.support.cli import run_cli
from tests.support.keys import FAKE_KEYS

OPENAI = FAKE_KEYS["openai"]


def file_store() -> FileKeyStore:
    return FileKeyStore(app_paths().keys_file)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_entries_use_the_app_apikey_names_and_plain_values() -> None:
    store = file_store()
    store.set(entry_name("openai"), OPENAI)
    assert json.loads(store.path.read_text()) == {"app-apikey-openai": OPENAI}


def test_the_key_folder_is_0700_and_the_file_0600() -> None:
    store = file_store()
    store.set(entry_name("groq"), FAKE_KEYS["groq"])
    assert mode(store.path.parent) == 0o700
    assert mode(store.path) == 0o600
    assert mode(store.path.with_name("keys.json.lock")) == 0o600


@pytest.mark.parametrize(
    "padding",
    [" ", "\t", "\n", "\r\n", "\u200b", "\ufeff", " \u200b\t\ufeff\n", "\u00a0", "\u2060"],
    ids=repr,
)
def test_surrounding_whitespace_and_invisible_characters_are_stripped_on_save(
    padding: str,
) -> None:
    store = file_store()
    store.set(entry_name("openai"), f"{padding}{OPENAI}{padding}")
    assert store.get(entry_name("openai")) == OPENAI


def test_nothing_inside_the_key_is_changed_and_its_format_is_not_validated() -> None:
    """Any printable-ASCII key is saved as it is, whatever its shape; only characters no key
    has are refused (tests/security/test_key_characters.py)."""
    store = file_store()
    odd = "not-a-key-at-all,with:punctuation;and~symbols{}|"
    store.set(entry_name("mistral"), odd)
    assert store.get(entry_name("mistral")) == odd


def test_saving_an_empty_value_unsets_the_entry() -> None:
    store = file_store()
    store.set(entry_name("openai"), OPENAI)
    assert store.set(entry_name("openai"), " \n") is False
    assert store.get(entry_name("openai")) is None


def test_a_failed_write_leaves_the_previous_file_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    store = file_store()
    store.set(entry_name("openai"), OPENAI)
    before = store.path.read_bytes()

    def disk_full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(KeyStoreError, match="disk is full"):
        store.set(entry_name("groq"), FAKE_KEYS["groq"])
    assert store.path.read_bytes() == before
    assert sorted(p.name for p in store.path.parent.iterdir()) == ["keys.json", "keys.json.lock"]


WRITER = textwrap.dedent(
    """
    import sys
    from byok_tui.keys.file_store import FileKeyStore
    from byok_tui.core.paths import app_paths
    store = FileKeyStore(app_paths().keys_file)
    worker, count = sys.argv[1], int(sys.argv[2])
    for i in range(count):
        store.set(f"app-apikey-w{worker}-{i}", f"value-{worker}-{i}-" + "x" * 40)
    """
)


def test_two_processes_setting_different_keys_at_once_lose_neither() -> None:
    count = 40
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(worker), str(count)])
        for worker in (1, 2)
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    data = json.loads(file_store().path.read_text())
    assert len(data) == 2 * count
    assert data["app-apikey-w2-39"] == "value-2-39-" + "x" * 40


def test_a_reader_never_sees_a_half_written_file() -> None:
    store = file_store()
    store.set("app-apikey-seed", "y" * 40)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, "3", "150"])
    reads = 0
    while writer.poll() is None:
        store.load()  # raises KeyFileCorruptError on a partial file
        reads += 1
    assert writer.returncode == 0
    assert reads > 0


def test_every_cli_keys_set_at_once_keeps_every_key() -> None:
    remote = list(FAKE_KEYS)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "byok_tui", "keys", "set", provider_id],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for provider_id in remote
    ]
    for proc, provider_id in zip(procs, remote, strict=True):
        proc.communicate(FAKE_KEYS[provider_id] + "\n", timeout=60)
    assert all(p.returncode == 0 for p in procs)
    stored = json.loads(file_store().path.read_text())
    assert stored == {entry_name(p): FAKE_KEYS[p] for p in remote}


CORRUPT_CONTENTS = {
    "not json": b"{ this is not json",
    "not an object": b'["sk-proj-abc"]',
    "a value that is not a string": b'{"app-apikey-openai": 42}',
    "not utf-8": b"\xff\xfe\x00garbage",
    "empty": b"",
    "deeply nested": b"[" * 100000,
}


@pytest.mark.parametrize("content", CORRUPT_CONTENTS.values(), ids=CORRUPT_CONTENTS.keys())
def test_a_corrupt_key_file_is_reported_by_name_and_never_overwritten(content: bytes) -> None:
    store = file_store()
    store.path.parent.mkdir(parents=True, mode=0o700)
    store.path.write_bytes(content)
    store.path.chmod(0o600)
    with pytest.raises(KeyFileCorruptError) as raised:
        store.get(entry_name("openai"))
    assert str(store.path) in str(raised.value)
    with pytest.raises(KeyFileCorruptError):
        store.set(entry_name("openai"), OPENAI)
    with pytest.raises(KeyFileCorruptError):
        store.delete(entry_name("openai"))
    assert store.path.read_bytes() == content


def test_the_corruption_message_does_not_quote_the_file() -> None:
    store = file_store()
    store.path.parent.mkdir(parents=True, mode=0o700)
    secret = FAKE_KEYS["anthropic"]
    store.path.write_text('{"app-apikey-anthropic": "' + secret + '" trailing')
    with pytest.raises(KeyFileCorruptError) as raised:
        store.get(entry_name("anthropic"))
    assert secret not in str(raised.value)
    assert "not valid JSON" in str(raised.value)


def test_a_key_file_readable_by_others_is_tightened_and_the_user_told() -> None:
    store = file_store()
    store.set(entry_name("openai"), OPENAI)
    store.path.chmod(0o644)
    store.path.parent.chmod(0o755)
    fresh = file_store()
    assert fresh.get(entry_name("openai")) == OPENAI
    assert mode(fresh.path) == 0o600
    fresh.set(entry_name("groq"), FAKE_KEYS["groq"])
    assert mode(fresh.path.parent) == 0o700
    assert any("600" in n for n in fresh.notices)
    assert any("700" in n for n in fresh.notices)


def test_rotation_anywhere_is_used_by_the_next_resolution() -> None:
    openai = get_provider("openai")
    store = file_store()
    store.set(entry_name("openai"), OPENAI)
    assert resolve_key(openai, store).value == OPENAI

    # Rotated by the CLI in another process.
    rotated = "sk-proj-ROTATED-BY-CLI" + "r" * 50
    assert run_cli("keys", "set", "openai", stdin=rotated + "\n").returncode == 0
    assert resolve_key(openai, store).value == rotated

    # Rotated by hand-editing the file.
    edited = "sk-proj-EDITED-BY-HAND" + "h" * 50
    store.path.write_text(json.dumps({entry_name("openai"): edited}))
    assert resolve_key(openai, store).value == edited
