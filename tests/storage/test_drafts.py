"""Drafts as the database keeps them: what a run keeps is what a later start reads, and a row
written by anything else (by hand, an older byok-tui) reads as text, never as a crash."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from byok_tui.core.records import Draft
from byok_tui.storage.draft_rows import DRAFT_SETTING
from byok_tui.storage.store import Store

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


def ended_runs(run: str) -> bool:
    return run.startswith("old")


def test_a_start_claims_the_drafts_of_ended_runs_for_itself_alone() -> None:
    """Claimed, a draft is the claiming run's (a run still going keeps its own); claiming
    again, as after a read that failed, gives back the same drafts."""
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "db.sqlite3")
        store.keep_draft("old-1", Draft("one", ("notes.md",)))
        store.keep_draft("running", Draft("not ended"))
        store.keep_draft("old-2", Draft("two"))
        claimed = store.claim_drafts("new", ended_runs)
        assert list(claimed.values()) == [Draft("one", ("notes.md",)), Draft("two")]
        assert all(name.startswith("new+") for name in claimed)
        assert store.claim_drafts("new", ended_runs) == claimed
        assert store.claim_drafts("other", ended_runs) == {}
        assert store.drafts() == {**claimed, "running": Draft("not ended")}
        store.keep_draft("new", Draft("one\n\ntwo"), replacing=tuple(claimed))
        assert store.drafts() == {"running": Draft("not ended"), "new": Draft("one\n\ntwo")}
        store.close()


def test_two_starts_at_the_same_moment_never_both_give_back_a_draft() -> None:
    """Each draft of an ended run goes to exactly one of two starts claiming at once (their
    own connections, as two processes have)."""
    import threading

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "db.sqlite3"
        setup = Store(path)
        for number in range(40):
            setup.keep_draft(f"old-{number}", Draft(f"draft {number}"))
        setup.close()
        start = threading.Barrier(2)
        claimed: dict[str, list[Draft]] = {}

        def claim(run: str) -> None:
            store = Store(path)
            start.wait()
            claimed[run] = list(store.claim_drafts(run, ended_runs).values())
            store.close()

        threads = [threading.Thread(target=claim, args=(run,)) for run in ("a", "b")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        given_back = claimed["a"] + claimed["b"]
        assert sorted(d.text for d in given_back) == sorted(f"draft {n}" for n in range(40))


def test_two_runs_starting_together_do_not_both_get_an_ended_runs_draft() -> None:
    """Two byok-tui started together (a terminal multiplexer restoring its panes) after one
    that quit with a draft: the draft comes back in one of them, not in both."""
    from byok_tui.app_services.app_data import AppData
    from byok_tui.app_services.services import AppContext, open_services

    first = AppContext.open(open_services())
    first.db.default_bot("openai", "gpt-5.4-mini")
    first.db.keep_draft("old:ended", Draft("half a thought"))
    second = AppContext.open(open_services())
    one, two = AppData(first), AppData(second)
    try:
        given = [one.chat_state().drafts_left, two.chat_state().drafts_left]
    finally:
        one.close()
        two.close()
    assert sorted(len(drafts) for drafts in given) == [0, 1]
    [draft] = [draft for drafts in given for draft in drafts.values()]
    assert draft == Draft("half a thought")


def test_a_database_that_takes_no_writes_gives_the_drafts_back_unclaimed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A claim is a write: where none can be made, the drafts still come back."""
    import sqlite3

    from byok_tui.app_services.app_data import AppData
    from byok_tui.app_services.services import AppContext, open_services
    from byok_tui.storage.database import StorageError

    def refused(self: Store, run: str, ended: object) -> dict[str, Draft]:
        raise StorageError(
            self.path, sqlite3.OperationalError("attempt to write a readonly database")
        )

    context = AppContext.open(open_services())
    context.db.default_bot("openai", "gpt-5.4-mini")
    context.db.keep_draft("old:ended", Draft("half a thought"))
    monkeypatch.setattr(Store, "claim_drafts", refused)
    data = AppData(context)
    try:
        assert data.chat_state().drafts_left == {"old:ended": Draft("half a thought")}
    finally:
        data.close()
