"""When a key was set is kept to the instant: a key replaced by a command within the same
second as the old key's last answer starts afresh (its health is not the old key's)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from byok_tui.spend.key_report import health_of
from byok_tui.storage.store import Store
from tests.support.spend import a_chat_request


def test_an_answer_before_the_key_was_set_in_the_same_second_is_not_the_new_key_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "byok.db")
    book = store.key_health
    refused = a_chat_request(
        started=1_000.2,
        provider="groq",
        status=401,
        outcome="auth",
        key_name="default",
        key_fingerprint="old-key",
    )
    book.note(refused)
    monkeypatch.setattr(time, "time", lambda: 1_000.4)  # set 0.2 s after it
    book.mark_set("groq", "default")
    set_at = book.set_times()[("groq", "default")]
    assert set_at == pytest.approx(1_000.4)
    # The command's key is not known until it runs: only answers after it was set count.
    assert health_of(book.of_provider("groq"), "default", None, set_at) is None
    store.close()
