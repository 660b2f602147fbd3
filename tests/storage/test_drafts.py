"""Drafts as the database keeps them: what a run keeps is what a later start reads, and a row
written by anything else (by hand, an older byok-tui) reads as text, never as a crash."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from byok_tui.records import Draft
from byok_tui.storage.store import DRAFT_SETTING, Store

texts = st.text(st.characters(exclude_categories=["Cs"]), max_size=200)


@settings(max_examples=60, deadline=None)
@given(text=texts, files=st.lists(texts, max_size=3))
def test_a_kept_draft_reads_back_as_it_was_kept(text: str, files: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "db.sqlite3")
        store.keep_draft("run", Draft(text, tuple(files)))
        expected = {"run": Draft(text, tuple(files))} if text or files else {}
        assert store.drafts() == expected
        store.close()


@settings(max_examples=60, deadline=None)
@given(value=texts)
def test_a_row_written_by_anything_else_reads_as_a_draft(value: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "db.sqlite3")
        store.set_setting(DRAFT_SETTING + "other", value)
        [(run, draft)] = store.drafts().items()
        assert run == "other" and isinstance(draft, Draft)
        assert all(isinstance(path, str) for path in draft.files)
        store.close()


def test_keeping_replaces_the_drafts_taken_over_and_an_empty_one_removes() -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "db.sqlite3")
        store.keep_draft("old-1", Draft("one"))
        store.keep_draft("old-2", Draft("two"))
        store.keep_draft("new", Draft("one\n\ntwo"), replacing=("old-1", "old-2"))
        assert store.drafts() == {"new": Draft("one\n\ntwo")}
        store.keep_draft("new:ended", Draft(), replacing=("new",))
        assert store.drafts() == {}
        store.close()


def test_a_row_nested_deeper_than_python_parses_reads_as_text() -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "db.sqlite3")
        store.set_setting(DRAFT_SETTING + "deep", "[" * 100_000)
        assert store.drafts() == {"deep": Draft("[" * 100_000)}
        store.close()
