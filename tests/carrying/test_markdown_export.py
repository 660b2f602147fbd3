"""Markdown export: the title, then each turn under a heading with who wrote it, the model
and the time; replies as they are (code fences kept); a partial or failed reply says so; no
key, even one pasted into a message."""

from __future__ import annotations

from pathlib import Path

from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.storage.markdown_export import when
from tests.support.cli import run_cli
from tests.support.stored import add_cut_reply

KEY = "sk-proj-" + "M" * 60
REPLY = "Use `open`:\n\n```python\nwith open(path) as f:\n    text = f.read()\n```\n"


def two_conversations() -> tuple[int, int]:
    open_key_store(app_paths()).set(entry_name("openai"), KEY)
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    first = store.create_conversation(bot.id, "Reading files")
    question = store.add_message(first.id, "user", f"How do I read a file? My key is {KEY}")
    store.add_message(first.id, "assistant", REPLY, provider="openai", model="gpt-5.5")
    add_cut_reply(store, first.id, "Also")
    second = store.create_conversation(bot.id, "Second")
    store.add_message(second.id, "user", "Hello")
    return first.id, question.id


def test_one_conversation_as_markdown_to_standard_output() -> None:
    conversation_id, question_id = two_conversations()
    store = open_store(open_services())
    question = store.message(question_id)
    result = run_cli("export", "--markdown", "--conversation", str(conversation_id))
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert text.startswith("# Reading files\n\n*Default · started ")
    assert f"### You · {when(question.created)}\n\nHow do I read a file? My key is [REDACTED]" in (
        text
    )
    assert f"### Assistant · openai gpt-5.5 · {when(question.created)}\n\n{REPLY}" in text
    assert "Also\n\n*Partial reply: it stopped before its end.*" in text
    assert "*Error: stopped before the reply finished*" in text
    assert KEY not in text and KEY[-12:] not in text
    assert "# Second" not in text


def test_every_conversation_to_a_private_file(tmp_path: Path) -> None:
    two_conversations()
    path = tmp_path / "all.md"
    result = run_cli("export", "--markdown", "--all", str(path))
    assert result.returncode == 0, result.stderr
    text = path.read_text()
    assert text.index("# Reading files") < text.index("\n---\n") < text.index("# Second")
    assert path.stat().st_mode & 0o777 == 0o600
    assert KEY not in text


def test_the_options_are_checked_before_anything_is_read() -> None:
    result = run_cli("export", "--conversation", "1")
    assert result.returncode == 2 and "Add --markdown" in result.stderr
    result = run_cli("export", "--markdown", "--conversation", "99")
    assert result.returncode != 0 and "no conversation 99" in result.stderr
    assert "Traceback" not in result.stderr


async def test_the_palettes_export_writes_the_open_conversation_to_exports() -> None:
    from tests.support.fake_backend import FakeProviders
    from tests.support.pilot import (
        WIDTH_WITHOUT_CONFIG_PANE,
        app_answered_by,
        chat,
        settle,
        wait_for,
    )

    two_conversations()  # the newest, "Second", opens
    app = app_answered_by(FakeProviders())
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        chat(app).action_export_markdown()
        folder = app_paths().data_dir / "exports"
        await wait_for(pilot, lambda: folder.is_dir() and any(folder.glob("*.md")))
        [path] = folder.glob("byok-tui-conversation-*.md")
        assert path.read_text().startswith("# Second\n")
        assert path.stat().st_mode & 0o777 == 0o600
        await wait_for(pilot, lambda: any(str(path) in str(n.message) for n in app._notifications))
