"""Files sent with a message (`ask --attach`, and the service the app uses): a text file in a
fenced block under its name, an image in the provider's format; kept with the message, so
the history sends them again; an image for a model that takes none refused before anything
is stored or sent, naming models that do."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from byok_tui.app_services.services import Services, open_services, open_store
from byok_tui.chat.conversation import ConversationService
from byok_tui.chat.outgoing import Outgoing
from byok_tui.core.attachments import read_attachment
from byok_tui.core.paths import app_paths
from byok_tui.core.records import Bot, BotConfig, Conversation
from byok_tui.storage.store import Store
from tests.support.cli import run_cli
from tests.support.provider_client import client_for
from tests.support.provider_server import ProviderServer, openai_reply

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
KEY = "sk-proj-" + "A" * 60


def an_openai_conversation() -> tuple[Services, Store, Bot, Conversation]:
    services = open_services()
    store = open_store(services)
    bot = store.create_bot(BotConfig("Files", "openai", "gpt-5.5"))
    return services, store, bot, store.create_conversation(bot.id, "files")


def files(tmp_path: Path) -> tuple[Path, Path]:
    notes, pixel = tmp_path / "notes.md", tmp_path / "pixel.png"
    notes.write_text("# Notes\n\n- one\n")
    pixel.write_bytes(PNG)
    return notes, pixel


def test_ask_attach_sends_a_text_file_fenced_and_an_image_as_a_data_url(
    server: ProviderServer, tmp_path: Path
) -> None:
    notes, pixel = files(tmp_path)
    server.reply_with(openai_reply("Seen."))
    env = {"BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1", "OPENAI_API_KEY": KEY}
    args = ("ask", "-p", "openai", "--attach", str(notes), "--attach", str(pixel), "Look")
    result = run_cli(*args, env=env)
    assert result.returncode == 0, result.stderr
    [turn] = server.requests[0].json["messages"]
    assert turn["content"] == [
        {"type": "text", "text": "Look\n\nnotes.md:\n\n```md\n# Notes\n\n- one\n```"},
        {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()},
        },
    ]
    store = open_store(open_services())
    [conversation] = store.conversations(store.bots()[0].id)
    question = store.messages(conversation.id)[0]
    kept = store.attachments_in(conversation.id)[question.id]
    assert [(a.name, a.media_type) for a in kept] == [
        ("notes.md", "text/plain"),
        ("pixel.png", "image/png"),
    ]
    assert kept[1].data == PNG


def test_an_image_for_a_model_that_takes_none_is_refused_before_anything_is_stored(
    server: ProviderServer, tmp_path: Path
) -> None:
    _notes, pixel = files(tmp_path)
    env = {
        "BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1",
        "GROQ_API_KEY": "gsk_" + "G" * 52,
    }
    result = run_cli("ask", "-p", "groq", "--attach", str(pixel), "What is it?", env=env)
    assert result.returncode == 2
    assert "llama-3.3-70b-versatile (Groq) takes no images; nothing was sent" in result.stderr
    assert "anthropic:claude-sonnet-4-6" in result.stderr  # a model that takes them
    assert server.requests == []
    store = open_store(open_services())
    assert store.conversations(store.bots()[0].id) == []


def test_a_file_that_cannot_be_attached_is_a_usage_error(tmp_path: Path) -> None:
    binary = tmp_path / "tool"
    binary.write_bytes(b"\x7fELF\x00\x00")
    result = run_cli("ask", "-p", "groq", "--attach", str(binary), "hi")
    assert result.returncode == 2 and "is not a file byok-tui can attach" in result.stderr
    assert "Traceback" not in result.stderr


async def test_files_are_sent_again_with_the_history_and_named_to_a_model_without_images(
    server: ProviderServer, tmp_path: Path
) -> None:
    notes, pixel = files(tmp_path)
    services, store, bot, conversation = an_openai_conversation()
    attached = [read_attachment(notes), read_attachment(pixel)]
    server.reply_with(openai_reply("Seen."), openai_reply("Still seen."))
    async with client_for("openai", server, services.keys) as client:
        service = ConversationService(store, client)
        async for _ in service.send(bot, conversation, Outgoing("Look", tuple(attached))):
            pass
        async for _ in service.send(bot, conversation, Outgoing("And now?")):
            pass
    first, _reply, latest = server.requests[1].json["messages"]
    assert first == server.requests[0].json["messages"][0], "the files go again, as sent"
    assert latest == {"role": "user", "content": "And now?"}

    # Asked of a model that takes no images: the image is named, never dropped unsaid.
    from dataclasses import replace

    from byok_tui.chat.context_window import HistoryReader
    from byok_tui.core.registry import get_provider

    text_only = replace(bot.config, provider="deepseek", model="deepseek-v4-flash")
    reader = HistoryReader(store, lambda provider, model: None)
    history = reader.read(conversation.id, get_provider("deepseek"), text_only).turns
    assert history[0].images == ()
    assert history[0].content.endswith("[images not sent, as this model takes none: pixel.png]")


def test_files_go_out_with_an_export_and_come_back_checked(tmp_path: Path) -> None:
    """Exported in JSON (base64) and named in Markdown; imported elsewhere, checked as a file
    attached here is: an image that is not what it says is refused, and nothing written."""
    import json

    notes, pixel = files(tmp_path)
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, "With files")
    store.add_message(
        conversation.id,
        "user",
        "Look",
        attachments=[read_attachment(notes), read_attachment(pixel)],
    )
    exported = tmp_path / "export.json"
    assert run_cli("export", str(exported)).returncode == 0
    message = json.loads(exported.read_text())["conversations"][0]["messages"][0]
    assert [a["name"] for a in message["attachments"]] == ["notes.md", "pixel.png"]
    assert base64.b64decode(message["attachments"][1]["data"]) == PNG

    markdown = run_cli("export", "--markdown").stdout
    assert "Look\n\n*Attached: notes.md · 15 B, pixel.png · 70 B*" in markdown

    elsewhere = {"BYOK_TUI_HOME": str(tmp_path / "elsewhere")}
    assert run_cli("import", str(exported), env=elsewhere).returncode == 0
    lying = json.loads(exported.read_text())
    lying["conversations"][0]["uuid"] = "another"
    lying["conversations"][0]["messages"][0]["uuid"] = "another-message"
    lying["conversations"][0]["messages"][0]["attachments"][1]["data"] = base64.b64encode(
        b"MZ\x90\x00 not a png"
    ).decode()
    (tmp_path / "lying.json").write_text(json.dumps(lying))
    refused = run_cli("import", str(tmp_path / "lying.json"), env=elsewhere)
    assert refused.returncode != 0 and "an image attachment is not what it says" in refused.stderr


def test_an_imported_export_keeps_the_files_with_their_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    _notes, pixel = files(tmp_path)
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, "With files")
    store.add_message(conversation.id, "user", "Look", attachments=[read_attachment(pixel)])
    exported = tmp_path / "export.json"
    assert run_cli("export", str(exported)).returncode == 0
    monkeypatch.setenv("BYOK_TUI_HOME", str(tmp_path / "elsewhere"))
    assert run_cli("import", str(exported)).returncode == 0
    there = open_store(open_services())
    [imported] = [c for b in there.bots() for c in there.conversations(b.id)]
    [question] = there.messages(imported.id)
    [kept] = there.attachments_in(imported.id)[question.id]
    assert (kept.name, kept.media_type, kept.data) == ("pixel.png", "image/png", PNG)
    assert json.loads(exported.read_text())["format"] == "byok-tui-export"


async def test_an_edited_message_keeps_the_files_it_had(
    server: ProviderServer, tmp_path: Path
) -> None:
    notes, _pixel = files(tmp_path)
    services, store, bot, conversation = an_openai_conversation()
    server.reply_with(openai_reply("One."), openai_reply("Two."))
    async with client_for("openai", server, services.keys) as client:
        service = ConversationService(store, client)
        outgoing = Outgoing("Read", (read_attachment(notes),))
        async for _ in service.send(bot, conversation, outgoing):
            pass
        first = store.messages(conversation.id)[0]
        async for _ in service.send(bot, conversation, Outgoing("Read it again", edit_of=first.id)):
            pass
    assert server.requests[1].json["messages"] == [
        {"role": "user", "content": "Read it again\n\nnotes.md:\n\n```md\n# Notes\n\n- one\n```"}
    ]


async def test_a_key_of_yours_in_a_text_file_is_neither_stored_nor_sent(
    server: ProviderServer, tmp_path: Path
) -> None:
    from byok_tui.keys import entry_name

    services, store, bot, conversation = an_openai_conversation()
    services.keys.set(entry_name("openai"), KEY)
    store.bot_key(bot.id)
    from byok_tui.core.redaction import remember_secret

    remember_secret(KEY)  # as the app does for every stored key
    env_file = tmp_path / "settings.env"
    env_file.write_text(f"OPENAI_API_KEY={KEY}\nDEBUG=1\n")
    server.reply_with(openai_reply("Looks fine."))
    async with client_for("openai", server, services.keys, key=KEY) as client:
        service = ConversationService(store, client)
        attached = [read_attachment(env_file)]
        async for _ in service.send(
            bot, conversation, Outgoing("Check my config", tuple(attached))
        ):
            pass
    assert KEY not in server.requests[0].body.decode()
    assert "OPENAI_API_KEY=[REDACTED]" in server.requests[0].json["messages"][0]["content"]
    for written in app_paths().data_dir.glob("byok-tui.sqlite3*"):  # the WAL too
        assert KEY.encode() not in written.read_bytes(), written.name
