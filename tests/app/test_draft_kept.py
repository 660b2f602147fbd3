"""What is typed and not sent is never lost: the composer's draft comes back on the next start,
after a quit here (and after a kill or a hang-up: tests/faults/test_nothing_lost.py), with the
files attached to it read again. A sent message does not come back, an edit's changes are kept
with the draft from before it, and a key in a draft is kept only redacted, as in a message."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from textual import events
from textual.pilot import Pilot
from textual.widgets import Button

from byok_tui.core.attachments import Attachment
from byok_tui.core.paths import app_paths
from byok_tui.screens.chat_composer import ChatComposer
from tests.support.fake_backend import FakeProviders
from tests.support.keys import FAKE_KEYS
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    app_answered_by,
    chat,
    replies,
    send,
    settle,
    wait_for,
    workers_done,
)
from tests.support.stored import one_exchange

KEY = FAKE_KEYS["openai"]


def a_conversation() -> FakeProviders:
    one_exchange(KEY, "Drafts")
    return FakeProviders()


def composer_of(pilot: Pilot[None]) -> ChatComposer:
    return chat(pilot.app).query_one(ChatComposer)  # type: ignore[arg-type]


async def focused_composer(pilot: Pilot[None]) -> ChatComposer:
    """The chat screen's composer, once the chat screen is up, with the focus."""
    await settle(pilot)
    composer = composer_of(pilot)
    composer.focus()
    return composer


async def composer_after_a_restart(fake: FakeProviders) -> str:
    """What the composer holds once a new app has started and read its state."""
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        text = composer_of(pilot).text
        await pilot.press("ctrl+q")
    return text


def kept_drafts() -> list[str]:
    """The text of the drafts the database holds now, read from its file."""
    with sqlite3.connect(app_paths().data_dir / "byok-tui.sqlite3") as db:
        rows = db.execute("SELECT value FROM settings WHERE name LIKE 'composer-draft:%'")
        return [json.loads(value)["text"] for (value,) in rows]


def chips(pilot: Pilot[None]) -> list[str]:
    column = chat(pilot.app)  # type: ignore[arg-type]
    return [str(chip.label) for chip in column.query("#attachments Button").results(Button)]


def database_text() -> str:
    """Every row of the database and its write-ahead log, as bytes read from the files."""
    folder = app_paths().data_dir
    return b"".join(path.read_bytes() for path in folder.glob("byok-tui.sqlite3*")).decode(
        "utf-8", "replace"
    )


async def test_a_draft_left_in_the_composer_is_back_after_a_quit() -> None:
    fake = a_conversation()
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await focused_composer(pilot)
        await pilot.press(*"half a thought")
        await pilot.press("ctrl+q")  # at once: not a second after the last key
    assert await composer_after_a_restart(fake) == "half a thought"


async def test_a_sent_message_does_not_come_back_as_a_draft() -> None:
    fake = a_conversation()
    fake.enqueue("A2")
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        composer_of(pilot).text = "a thought typed a while ago"
        await wait_for(pilot, lambda: kept_drafts() == ["a thought typed a while ago"])
        await send(pilot, "Q2")
        await wait_for(pilot, lambda: replies(app) == ["A1", "A2"])
        await pilot.press("ctrl+q")
    assert await composer_after_a_restart(fake) == ""


async def test_what_was_typed_while_the_draft_was_read_follows_it() -> None:
    """Keys typed on the start screen are not lost under the draft, nor is the draft lost
    under them."""
    fake = a_conversation()
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        composer_of(pilot).text = "the draft"
        await pilot.press("ctrl+q")
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        composer = composer_of(pilot) if pilot.app.screen.query(ChatComposer) else None
        if composer is None:  # still the start screen: typed there, handed on
            await pilot.press(*"typed early")
        else:
            composer.focus()
            composer.text = "typed early"
        await settle(pilot)
        assert composer_of(pilot).text == "the draft\ntyped early"


async def test_an_edit_keeps_its_changes_after_the_draft_from_before_it() -> None:
    fake = a_conversation()
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        composer = composer_of(pilot)
        composer.text = "my draft"
        await app.screen.run_action("edit_last")
        assert composer.text == "Q1"
        await pilot.press("ctrl+q")  # an edit opened and left unchanged: nothing of it kept
    assert await composer_after_a_restart(fake) == "my draft"

    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await app.screen.run_action("edit_last")
        composer_of(pilot).text = "Q1, said better"
        await pilot.press("ctrl+q")
    assert await composer_after_a_restart(fake) == "my draft\n\nQ1, said better"


async def test_a_key_in_a_draft_is_kept_redacted() -> None:
    fake = a_conversation()
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        composer_of(pilot).text = f"my key is {KEY}"
        await pilot.press("ctrl+q")
    assert KEY not in database_text()
    assert kept_drafts() == ["my key is [REDACTED]"]
    assert await composer_after_a_restart(fake) == "my key is [REDACTED]"


async def test_files_attached_to_a_draft_are_attached_again_as_they_are_now(
    tmp_path: Path,
) -> None:
    """A file is read again on the next start (what it holds then is what is sent); one gone
    meanwhile is said, and the text stays."""
    notes, gone = tmp_path / "notes.md", tmp_path / "gone.md"
    notes.write_text("first version")
    gone.write_text("soon deleted")
    fake = a_conversation()
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        composer = await focused_composer(pilot)
        for path in (notes, gone):
            composer.post_message(events.Paste(str(path)))  # as a terminal drops a file
            await pilot.pause()
        await wait_for(pilot, lambda: len(chips(pilot)) == 2)
        await pilot.press(*"see the notes")
        await pilot.press("ctrl+q")
    notes.write_text("second version, longer")
    gone.unlink()
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: chips(pilot) == ["✕ 📎 notes.md · 22 B"])
        assert composer_of(pilot).text == "see the notes"
        said = [str(n.message) for n in app._notifications]
        assert any("Not attached" in line and "gone.md" in line for line in said), said
        await pilot.press("ctrl+q")
    app = app_answered_by(fake)  # the file gone was said once: it is not asked for again
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: chips(pilot) == ["✕ 📎 notes.md · 22 B"])
        await workers_done(app)
        await pilot.pause()
        assert not [n for n in app._notifications if "gone.md" in str(n.message)]
        await pilot.press("ctrl+q")


async def test_a_file_still_being_read_at_the_end_is_attached_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file pasted just before a quit, its read not done yet, is in the draft all the same:
    the next start attaches it."""
    import threading

    from byok_tui.app_services.app_data import AppData

    report = tmp_path / "report.md"
    report.write_text("slow to read")
    reading, let_go = threading.Event(), threading.Event()
    read_attachment = AppData.read_attachment

    def slow(self: AppData, path: Path) -> Attachment:
        reading.set()
        let_go.wait(5)  # a large file on a slow disk
        return read_attachment(self, path)

    monkeypatch.setattr(AppData, "read_attachment", slow)
    fake = a_conversation()
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        composer = await focused_composer(pilot)
        await pilot.press(*"read this")
        composer.post_message(events.Paste(str(report)))
        await wait_for(pilot, reading.is_set)
        await pilot.press("ctrl+q")
    let_go.set()
    monkeypatch.setattr(AppData, "read_attachment", read_attachment)
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: chips(pilot) == ["✕ 📎 report.md · 12 B"])
        assert composer_of(pilot).text == "read this"
        await pilot.press("ctrl+q")
