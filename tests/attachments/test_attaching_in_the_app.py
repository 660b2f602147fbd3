"""Attaching in the app: ctrl+a (a path asked for), or a path pasted or dropped into the
message box, makes a chip above it (a click takes it off); the next message carries the
files, and shows them by name, then and when reopened. A path that names no file is typed
after all; a message whose file is refused comes back with its files, nothing lost."""

from __future__ import annotations

import base64
import time
from pathlib import Path

import pytest
from textual import events
from textual.widgets import Button, Input

from byok_tui.app import ByokApp
from byok_tui.app_services.app_data import AppData
from byok_tui.core.attachments import Attachment
from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.widgets.composer import Composer
from byok_tui.widgets.message_views import UserMessage
from tests.support.fake_backend import FakeProviders
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    app_answered_by,
    chat,
    error_texts,
    replies,
    replying,
    settle,
    wait_for,
)

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def chips(app: ByokApp) -> list[str]:
    return [str(b.label) for b in chat(app).query("#attachments Button").results(Button)]


def shown_messages(app: ByokApp) -> list[str]:
    return [str(m.render()) for m in chat(app).query(UserMessage)]


def notes_to_read(tmp_path: Path) -> tuple[ByokApp, FakeProviders, Path]:
    """The app with an OpenAI key, "Read." its next reply, and a notes file to attach."""
    open_key_store(app_paths()).set(entry_name("openai"), "sk-proj-" + "F" * 60)
    notes = tmp_path / "notes.md"
    notes.write_text("- one\n")
    fake = FakeProviders()
    fake.enqueue("Read.")
    return app_answered_by(fake), fake, notes


async def test_ctrl_a_attaches_a_file_that_the_next_message_carries(tmp_path: Path) -> None:
    app, fake, notes = notes_to_read(tmp_path)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+a")
        await wait_for(pilot, lambda: isinstance(app.screen.focused, Input))
        app.screen.query_one(Input).value = str(notes)
        await pilot.press("enter")
        await wait_for(pilot, lambda: chips(app) == ["✕ 📎 notes.md · 6 B"])

        composer = chat(app).query_one(Composer)
        composer.focus()
        composer.text = "Summarise"
        await pilot.press("enter")
        await wait_for(pilot, lambda: replies(app) == ["Read."] and not replying(app))
        [request] = fake.requests
        assert request.chat.messages[-1].content == "Summarise\n\nnotes.md:\n\n```md\n- one\n```"
        assert chips(app) == [], "sent with the message: the chip is gone"
        assert shown_messages(app) == ["Summarise\n📎 notes.md · 6 B"]

    app = app_answered_by(FakeProviders())  # reopened: the stored message names its file
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        assert shown_messages(app) == ["Summarise\n📎 notes.md · 6 B"]


async def test_three_chips_are_all_shown_each_with_its_cross(tmp_path: Path) -> None:
    """At 120x40 with both panes, a row of three chips was cut at the composer's width: the
    second lost its ✕ and the third was not shown (though it was sent)."""
    files = []
    for name in ("notes.md", "red dot.png", "third file.md"):
        path = tmp_path / name
        path.write_bytes(PNG if name.endswith(".png") else b"# text")
        files.append(path)
    app = app_answered_by(FakeProviders())
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        composer = chat(app).query_one(Composer)
        composer.focus()
        for path in files:
            composer.post_message(events.Paste(f"'{path}'"))
            await pilot.pause()
        await wait_for(pilot, lambda: len(chips(app)) == 3)
        await settle(pilot)
        area = chat(app).query_one("#attachments").region
        for button in chat(app).query("#attachments Button").results(Button):
            region = button.region
            assert region.width > 0 and region.right <= area.right, (button.label, region)
            visible = str(button.label)[: region.width]
            assert visible.startswith("✕"), visible


async def test_a_pasted_path_becomes_a_chip_a_click_takes_it_off_and_text_stays_text(
    tmp_path: Path,
) -> None:
    pixel = tmp_path / "my pixel.png"
    pixel.write_bytes(PNG)
    app = app_answered_by(FakeProviders())
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        composer = chat(app).query_one(Composer)
        composer.focus()
        composer.post_message(events.Paste(f"'{pixel}'"))  # as a terminal drops a file
        await wait_for(pilot, lambda: chips(app) == ["✕ 📎 my pixel.png · 70 B"])
        assert composer.text == ""

        remove = chat(app).query_one("#attachments Button", Button)
        await wait_for(pilot, lambda: bool(remove.region))  # drawn: it can be clicked
        await pilot.click(remove)
        await wait_for(pilot, lambda: chips(app) == [])

        composer.post_message(events.Paste("/etc/not-a-file-here"))
        await wait_for(pilot, lambda: composer.text == "/etc/not-a-file-here")
        assert chips(app) == [] and not app._notifications


async def test_enter_pressed_while_a_pasted_file_is_read_sends_it_with_the_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_attachment = AppData.read_attachment

    def slow_read(self: AppData, path: Path) -> Attachment:
        time.sleep(0.3)  # a large file, or a slow disk
        return read_attachment(self, path)

    monkeypatch.setattr(AppData, "read_attachment", slow_read)
    app, fake, notes = notes_to_read(tmp_path)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        composer = chat(app).query_one(Composer)
        composer.focus()
        composer.text = "Summarise"
        composer.move_cursor((0, 9))
        # Pasted and sent at once, as the terminal delivers them: the message waits for the
        # file, read in a thread.
        app.post_message(events.Paste(str(notes)))
        app.post_message(events.Key("enter", None))
        await wait_for(pilot, lambda: replies(app) == ["Read."] and not replying(app))
        [request] = fake.requests
        assert request.chat.messages[-1].content == "Summarise\n\nnotes.md:\n\n```md\n- one\n```"
        assert chips(app) == []


async def test_an_image_for_a_model_without_images_comes_back_with_the_message(
    tmp_path: Path,
) -> None:
    open_key_store(app_paths()).set(entry_name("groq"), "gsk_" + "G" * 52)
    pixel = tmp_path / "pixel.png"
    pixel.write_bytes(PNG)
    fake = FakeProviders()
    app = app_answered_by(fake)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        composer = chat(app).query_one(Composer)
        composer.focus()
        composer.post_message(events.Paste(str(pixel)))
        await wait_for(pilot, lambda: len(chips(app)) == 1)
        composer.text = "What is it?"
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(error_texts(app)) and not replying(app))
        assert "takes no images" in error_texts(app)[0]
        assert composer.text == "What is it?"
        assert chips(app) == ["✕ 📎 pixel.png · 70 B"]
        # Not stored: not drawn as if it had been sent (it is back in the message box).
        assert shown_messages(app) == []
        assert fake.requests == []
