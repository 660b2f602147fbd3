"""ChatGPT's and Claude's exports are outside input of any shape: a field of the wrong type
(a parent that is a list, attachments that are a number) skips what holds it, counted, and
never stops the import. Property tests over arbitrary JSON in every field the importers read."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from byok_tui.app_services.services import open_services, open_store
from byok_tui.storage.foreign import ForeignFormatError, import_foreign

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
NODE_IDS = st.sampled_from(["a", "b", "c"])
MESSAGE = st.fixed_dictionaries(
    {},
    optional={
        "author": st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"])}) | JSON,
        "content": st.fixed_dictionaries(
            {"content_type": st.sampled_from(["text", "multimodal_text"]), "parts": JSON}
        )
        | JSON,
        "metadata": JSON,
        "recipient": JSON,
        "weight": JSON,
        "create_time": JSON,
    },
)
CHATGPT = st.fixed_dictionaries(
    {
        "id": st.text(min_size=1, max_size=4),
        "mapping": st.dictionaries(
            NODE_IDS,
            st.fixed_dictionaries(
                {},
                optional={
                    "parent": NODE_IDS | JSON,
                    "children": st.lists(NODE_IDS | JSON, max_size=3) | JSON,
                    "message": MESSAGE | JSON,
                },
            ),
            max_size=3,
        )
        | JSON,
    },
    optional={"current_node": NODE_IDS | JSON, "title": JSON, "create_time": JSON},
)
CLAUDE = st.fixed_dictionaries(
    {
        "uuid": st.text(min_size=1, max_size=4),
        "chat_messages": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "sender": st.sampled_from(["human", "assistant"]) | JSON,
                    "text": JSON,
                    "content": JSON,
                    "attachments": JSON,
                    "files": JSON,
                    "uuid": JSON,
                    "parent_message_uuid": JSON,
                    "created_at": JSON,
                },
            )
            | JSON,
            max_size=4,
        )
        | JSON,
    },
    optional={"name": JSON, "model": JSON, "current_leaf_message_uuid": JSON},
)


def imports_cleanly(source: str, conversations: list[Any]) -> None:
    store = open_store(open_services())
    summary = import_foreign(store, json.dumps(conversations).encode(), source)  # type: ignore[arg-type]
    assert summary.conversations_in_file == len(conversations)
    skipped = sum(summary.skipped_conversations.values())
    assert summary.conversations_added + skipped <= len(conversations)
    store.close()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(CHATGPT | JSON, max_size=3))
def test_any_chatgpt_shapes_are_imported_or_skipped_never_a_crash(conversations: list[Any]) -> None:
    imports_cleanly("chatgpt", conversations)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(CLAUDE | JSON, max_size=3))
def test_any_claude_shapes_are_imported_or_skipped_never_a_crash(conversations: list[Any]) -> None:
    imports_cleanly("claude", conversations)


@pytest.mark.parametrize("parent", [["x"], {"id": "x"}])
def test_a_chatgpt_node_whose_parent_is_a_list_or_an_object_is_no_crash(parent: Any) -> None:
    node = {
        "parent": parent,
        "children": [],
        "message": {
            "author": {"role": "user"},
            "content": {"content_type": "text", "parts": ["hello"]},
        },
    }
    imports_cleanly("chatgpt", [{"id": "c1", "mapping": {"n1": node}}])


@pytest.mark.parametrize("value", [5, True, "text"])
@pytest.mark.parametrize("field", ["attachments", "files"])
def test_claude_attachments_or_files_of_another_type_are_no_crash(field: str, value: Any) -> None:
    message = {"sender": "human", "text": "hello", field: value}
    imports_cleanly("claude", [{"uuid": "c1", "chat_messages": [message]}])


def test_a_file_that_is_no_list_is_still_a_format_error() -> None:
    with pytest.raises(ForeignFormatError):
        import_foreign(open_store(open_services()), b'{"a": 1}', "claude")


def test_the_wrong_from_says_which_export_it_looks_like(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.support.cli import run_cli

    chatgpt = tmp_path / "conversations.json"
    chatgpt.write_text(json.dumps([{"id": "c1", "mapping": {}}, {"id": "c2", "mapping": {}}]))
    result = run_cli("import", "--from", "claude", str(chatgpt))
    assert result.returncode != 0
    assert "looks like ChatGPT's export" in result.stderr and "--from chatgpt" in result.stderr
    claude = tmp_path / "claude.json"
    claude.write_text(json.dumps([{"uuid": "u1", "chat_messages": []}]))
    result = run_cli("import", "--from", "chatgpt", str(claude))
    assert result.returncode != 0 and "looks like Claude's export" in result.stderr


def test_one_thing_skipped_is_said_in_the_singular(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.support.cli import run_cli

    path = tmp_path / "conversations.json"
    message = {"sender": "human", "text": "hi"}
    path.write_text(json.dumps([{"uuid": "u1", "chat_messages": [message, 7]}]))
    result = run_cli("import", "--from", "claude", str(path))
    assert result.returncode == 0, result.stderr
    assert "Skipped 1 message: 1 malformed messages" in result.stdout


def test_an_export_whose_providers_are_a_list_says_so_plainly(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.support.cli import run_cli

    path = tmp_path / "export.json"
    path.write_text(json.dumps({"format": "byok-tui", "version": 1, "providers": []}))
    result = run_cli("import", str(path))
    assert result.returncode != 0
    assert "the export's providers are no table" in result.stderr
    assert "Fix the setting named above" not in result.stderr
