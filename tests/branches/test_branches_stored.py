"""Branches in the database: an edit or a regeneration is an alternative to what it replaces,
never a deletion; a conversation shows one branch, and exports and imports carry them all."""

from __future__ import annotations

import json

import pytest

from byok_tui.core.paths import app_paths
from byok_tui.storage import schema
from byok_tui.storage.store import Store
from byok_tui.storage.transfer import export_all, import_all
from tests.support.old_database import old_database
from tests.support.stored import alternatives


@pytest.fixture
def store() -> Store:
    return Store(app_paths().data_dir / "byok-tui.sqlite3")


def texts(store: Store, conversation_id: int) -> list[str]:
    return [m.content for m in store.messages(conversation_id)]


def test_a_regenerated_reply_is_an_alternative_and_switching_shows_its_branch(
    store: Store,
) -> None:
    bot = store.default_bot("openai", "gpt-5.5")
    chat = store.create_conversation(bot.id, "Branches")
    question = store.add_message(chat.id, "user", "Q1")
    first = store.add_message(chat.id, "assistant", "A1")
    store.add_message(chat.id, "user", "Q2 after A1")
    store.branch_from(chat.id, question.id)  # answer Q1 again
    second = store.add_message(chat.id, "assistant", "A2")
    assert texts(store, chat.id) == ["Q1", "A2"]
    assert alternatives(store, chat.id) == {first.id: (1, 2), second.id: (2, 2)}

    assert store.sibling(second.id, -1) == first.id
    assert store.sibling(second.id, 1) is None
    store.switch_to(first.id)  # down to the newest message after it
    assert texts(store, chat.id) == ["Q1", "A1", "Q2 after A1"]
    assert len(store.all_messages(chat.id)) == 4


def test_an_edited_first_message_is_a_second_first_message(store: Store) -> None:
    bot = store.default_bot("openai", "gpt-5.5")
    chat = store.create_conversation(bot.id, "Edits")
    original = store.add_message(chat.id, "user", "Hello")
    store.add_message(chat.id, "assistant", "Hi")
    store.branch_from(chat.id, original.parent_id)
    edited = store.add_message(chat.id, "user", "Hello there")
    assert texts(store, chat.id) == ["Hello there"]
    assert alternatives(store, chat.id) == {original.id: (1, 2), edited.id: (2, 2)}
    store.switch_to(original.id)
    assert texts(store, chat.id) == ["Hello", "Hi"]


def test_a_database_from_before_branches_keeps_every_conversation_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = app_paths().data_dir / "byok-tui.sqlite3"
    path.parent.mkdir(parents=True, exist_ok=True)
    old_database(path, schema.BRANCHES_MIGRATION - 1, ["Q1", "A1", "Q2", "A2"], monkeypatch)
    upgraded = Store(path)
    [conversation] = upgraded.conversations(upgraded.bots()[0].id)
    messages = upgraded.messages(conversation.id)
    assert [m.content for m in messages] == ["Q1", "A1", "Q2", "A2"]
    assert [m.parent_id for m in messages] == [None, *(m.id for m in messages[:-1])]
    assert alternatives(upgraded, conversation.id) == {}


def test_export_and_import_carry_every_branch_and_the_one_on_screen(
    store: Store, tmp_path: object
) -> None:
    bot = store.default_bot("openai", "gpt-5.5")
    chat = store.create_conversation(bot.id, "Branches")
    question = store.add_message(chat.id, "user", "Q1")
    store.add_message(chat.id, "assistant", "A1")
    store.branch_from(chat.id, question.id)
    store.add_message(chat.id, "assistant", "A2")
    store.switch_to(store.sibling(store.messages(chat.id)[-1].id, -1) or 0)  # back to A1
    exported = export_all(store, [])
    document = json.loads(exported)
    [conversation] = document["conversations"]
    assert [m["parent_uuid"] is None for m in conversation["messages"]] == [True, False, False]

    elsewhere = Store(app_paths().data_dir / "elsewhere.sqlite3")
    import_all(elsewhere, exported)
    [imported] = elsewhere.conversations(elsewhere.bots()[0].id)
    assert texts(elsewhere, imported.id) == ["Q1", "A1"]
    assert sorted(alternatives(elsewhere, imported.id).values()) == [(1, 2), (2, 2)]
    assert len(elsewhere.all_messages(imported.id)) == 3
    import_all(elsewhere, exported)  # the same file again changes nothing
    assert len(elsewhere.all_messages(imported.id)) == 3


def test_an_import_refuses_a_message_that_follows_one_not_before_it(store: Store) -> None:
    bot = store.default_bot("openai", "gpt-5.5")
    chat = store.create_conversation(bot.id, "Linear")
    store.add_message(chat.id, "user", "Q1")
    store.add_message(chat.id, "assistant", "A1")
    document = json.loads(export_all(store, []))
    messages = document["conversations"][0]["messages"]
    messages[0]["parent_uuid"] = messages[1]["uuid"]  # a loop: follows what follows it
    elsewhere = Store(app_paths().data_dir / "elsewhere.sqlite3")
    with pytest.raises(Exception, match="follows one not before it"):
        import_all(elsewhere, json.dumps(document).encode())
    assert elsewhere.bots() == []


def test_an_export_from_before_branches_imports_as_one_branch(store: Store) -> None:
    bot = store.default_bot("openai", "gpt-5.5")
    chat = store.create_conversation(bot.id, "Old export")
    for text in ("Q1", "A1", "Q2"):
        store.add_message(chat.id, "user" if text.startswith("Q") else "assistant", text)
    document = json.loads(export_all(store, []))
    conversation = document["conversations"][0]
    del conversation["current_uuid"]
    for message in conversation["messages"]:
        del message["parent_uuid"]
    elsewhere = Store(app_paths().data_dir / "elsewhere.sqlite3")
    import_all(elsewhere, json.dumps(document).encode())
    [imported] = elsewhere.conversations(elsewhere.bots()[0].id)
    assert texts(elsewhere, imported.id) == ["Q1", "A1", "Q2"]
