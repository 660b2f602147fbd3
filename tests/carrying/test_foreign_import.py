"""Importing ChatGPT's and Claude's data exports (files written from their documented
shapes, in tests/carrying/exports/): every branch of a ChatGPT conversation, the one shown
by `current_node` on screen; Claude's messages in order or after the parent they name. The
file is untrusted: text made terminal-safe, keys redacted, what cannot be imported skipped
and counted, a second import adds nothing, a bad file adds nothing at all."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from byok_tui.app_services.services import open_services, open_store
from byok_tui.storage.foreign import ForeignFormatError, import_foreign
from byok_tui.storage.store import Store
from tests.support.cli import run_cli
from tests.support.stored import alternatives

EXPORTS = Path(__file__).parent / "exports"
CHATGPT = EXPORTS / "chatgpt_conversations.json"
CLAUDE = EXPORTS / "claude_conversations.json"


def store() -> Store:
    return open_store(open_services())


def imported(db: Store, bot_name: str) -> dict[str, list[tuple[str, str]]]:
    """Each conversation of the bot: its title → (role, text) of the branch on screen."""
    [bot] = [b for b in db.bots() if b.name == bot_name]
    return {
        c.title: [(m.role, m.content) for m in db.messages(c.id)] for c in db.conversations(bot.id)
    }


def test_chatgpt_every_branch_is_kept_and_the_current_one_is_shown() -> None:
    result = run_cli("import", "--from", "chatgpt", str(CHATGPT))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "Imported 2 conversations and 8 messages from ChatGPT into the bot 'ChatGPT' "
        "(4 conversations in the file).",
        "Skipped 2 conversations: 1 malformed (no id or no mapping), 1 no text messages.",
        "Skipped 7 messages: 1 empty messages, 1 hidden or deleted messages, "
        "1 images and other non-text parts (marked in the text), 3 system and tool messages, "
        "1 tool calls (code runs, browsing).",
    ]
    db = store()
    conversations = imported(db, "ChatGPT")
    # The title's terminal codes are gone; the edited first message's branch is shown (the
    # deleted last edit is not imported, so the branch ends at the reply before it).
    assert conversations["Lisbon trip"] == [
        ("user", "Plan a 3-day trip to Lisbon"),
        ("assistant", "Day 1: Alfama.\n\n```text\ntram 28\n```"),
        ("user", "What is this tower?\n[image_asset_pointer not imported]"),
        ("assistant", "It is the Belém Tower. (Your key [REDACTED] is safe.)"),
    ]
    # Untitled: titled from its first message, as the app titles one.
    assert conversations["Untitled question about SSE"][1] == (
        "assistant",
        "Server-sent events stream text.",
    )
    [bot] = [b for b in db.bots() if b.name == "ChatGPT"]
    [lisbon] = [c for c in db.conversations(bot.id) if c.title == "Lisbon trip"]
    texts = {m.id: m.content for m in db.all_messages(lisbon.id)}
    places = {texts[i]: place for i, place in alternatives(db, lisbon.id).items()}
    assert places == {"Plan a trip": (1, 2), "Plan a 3-day trip to Lisbon": (2, 2)}
    reply = db.messages(lisbon.id)[1]
    assert (reply.provider, reply.model) == ("openai", "gpt-4o")

    again = run_cli("import", "--from", "chatgpt", str(CHATGPT))
    assert again.stdout.startswith("Imported 0 conversations and 0 messages from ChatGPT")
    assert len(store().all_messages(lisbon.id)) == 6, "a second import changes nothing"


def test_claude_thinking_attachments_and_branches() -> None:
    result = run_cli("import", "--from", "claude", str(CLAUDE))
    assert result.returncode == 0, result.stderr
    assert "Imported 2 conversations and 8 messages from Claude" in result.stdout
    assert "Skipped 2 conversations: 1 malformed (not an object), 1 no text messages." in (
        result.stdout
    )
    assert "1 empty messages" in result.stdout
    assert "2 tool calls, results and other non-text parts" in result.stdout
    db = store()
    conversations = imported(db, "Claude")
    sse = conversations["Explaining SSE"]
    assert sse[0] == ("user", "Explain server-sent events")
    assert sse[1] == ("assistant", "SSE is a one-way stream of `data:` lines over HTTP.")
    assert sse[2][1] == (
        "Here is my handler and a diagram\n\nhandler.py:\n\n````\ndef handler():\n"
        "    yield 'data: hi\\n\\n'\n\n````\n\n[diagram.png not imported]"
    )
    assert sse[3] == ("assistant", "Your handler is right.")
    [bot] = [b for b in db.bots() if b.name == "Claude"]
    [explained] = [c for c in db.conversations(bot.id) if c.title == "Explaining SSE"]
    assert db.messages(explained.id)[1].reasoning == "The user wants a short explanation."
    # Blue, not Red: the leaf the file names is on screen; Red is its alternative.
    assert conversations["Branches"] == [
        ("user", "Name a colour"),
        ("assistant", "Blue"),
        ("user", "Another"),
    ]


def test_a_zip_from_the_service_is_read_too(tmp_path: Path) -> None:
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.write(CLAUDE, "conversations.json")
        zipped.writestr("chat.html", "<html></html>")
    result = run_cli("import", "--from", "claude", str(archive))
    assert result.returncode == 0, result.stderr
    assert "Imported 2 conversations" in result.stdout


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"\xff\xfe not json", "not JSON"),
        (b'{"conversations": []}', "holds no list of conversations"),
    ],
)
def test_a_file_that_is_not_an_export_imports_nothing(
    tmp_path: Path, content: bytes, said: str
) -> None:
    path = tmp_path / "conversations.json"
    path.write_bytes(content)
    result = run_cli("import", "--from", "chatgpt", str(path))
    assert result.returncode != 0 and said in result.stderr
    assert "Traceback" not in result.stderr
    assert [b.name for b in store().bots()] == ["Default"]


def test_a_field_of_the_wrong_type_skips_what_holds_it_never_crashes() -> None:
    """Any value where an object, a list or a text is expected: skipped and counted."""
    odd: list[object] = [
        {"id": "a", "mapping": {"n": {"message": {"author": "user", "content": 7}}}},
        {"id": "b", "mapping": {"n": {"children": "x", "message": []}}},
        {"id": ["c"], "mapping": {}},
        {
            "id": "d",
            "mapping": {
                "n": {
                    "message": {
                        "author": {"role": "user"},
                        "content": {"content_type": "text", "parts": [None, 3]},
                    }
                }
            },
        },
    ]
    import json

    db = store()
    summary = import_foreign(db, json.dumps(odd).encode(), "chatgpt")
    assert summary.conversations_added == 1  # d: its parts are named, not imported
    assert summary.skipped_conversations == {
        "no text messages": 2,
        "malformed (no id or no mapping)": 1,
    }
    with pytest.raises(ForeignFormatError):
        import_foreign(db, b"[1, 2", "claude")


def test_progress_is_told_of_each_conversation() -> None:
    seen: list[tuple[int, int]] = []
    import_foreign(store(), CHATGPT.read_bytes(), "chatgpt", lambda *step: seen.append(step))
    assert seen == [(1, 2), (2, 2)]
