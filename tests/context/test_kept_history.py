"""A send keeps what it read of a long conversation and next time reads only the messages
added since: what it sends is always what a fresh read would send, whatever happened in
between (a reply written, cut or continued, an edit, another branch, a message changed by
another process, a model with another context)."""

from __future__ import annotations

import sqlite3
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from byok_tui.app_services.chat_state import PAGE
from byok_tui.app_services.services import open_services, open_store
from byok_tui.chat.context_window import HistoryReader, SentHistory
from byok_tui.core.attachments import Attachment
from byok_tui.core.paths import app_paths
from byok_tui.core.records import BotConfig
from byok_tui.core.registry import Provider, get_provider
from byok_tui.keys import entry_name, open_key_store
from byok_tui.providers.types import Role
from byok_tui.screens import chat_column, column_base
from byok_tui.storage.branch import BranchReader
from byok_tui.storage.store import Store
from tests.support.fake_backend import FakeProviders
from tests.support.pilot import (
    WIDTH_WITHOUT_CONFIG_PANE,
    app_answered_by,
    send,
    settle,
    wait_for,
    workers_done,
)

OPENAI = get_provider("openai")
MODEL = "a-model-the-registry-does-not-list"
CONFIG = BotConfig("Long", "openai", MODEL, max_tokens=100)
WORDS = "word " * 79 + "end"  # 400 characters
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 64
FULL_WALK = "tail(id, parent, total)"  # the read of a branch from its newest message back


class Context:
    """The context the provider's model list states, changed between reads by some steps."""

    def __init__(self) -> None:
        self.tokens = 2_000

    def __call__(self, provider: Provider, model: str) -> int | None:
        return self.tokens


@contextmanager
def fresh_store() -> Iterator[Store]:
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "byok.db")
        try:
            yield store
        finally:
            store.close()


def a_conversation(store: Store, messages: int) -> int:
    conversation = store.create_conversation(store.create_bot(CONFIG).id, "long")
    for number in range(messages):
        role: Role = "user" if number % 2 == 0 else "assistant"
        store.add_message(conversation.id, role, f"{number}: {WORDS}")
    return conversation.id


def shape(history: SentHistory) -> tuple[object, ...]:
    return ([m.id for m in history.messages], history.turns, history.left_out)


def full_walks(store: Store) -> list[str]:
    """The statements of the store's connection (in this thread) that read a branch back."""
    seen: list[str] = []
    store.connection().set_trace_callback(
        lambda statement: seen.append(statement) if FULL_WALK in statement else None
    )
    return seen


STEPS = (
    "ask",
    "answer",
    "cut",
    "continue",
    "elsewhere",
    "edit",
    "switch",
    "files",
    "context",
)


def take(
    step: str, store: Store, other: Store, conversation_id: int, context: Context, n: int
) -> None:
    """One thing that happens to a conversation between two sends. `other`: another
    process's connection to the same database."""
    branch = store.branch.recent_messages(conversation_id, 0)[0]
    newest = branch[-1] if branch else None
    if step == "ask":
        store.add_message(conversation_id, "user", f"question {n} {WORDS[: n * 37 % 400]}")
    elif step == "answer":
        store.add_message(conversation_id, "assistant", f"answer {n} {WORDS}")
    elif step == "cut":
        reply = store.add_message(conversation_id, "assistant", "", status="partial")
        store.save_reply(reply.id, content=f"half {n}", reasoning="", status="partial")
    elif step == "continue" and newest is not None and newest.role == "assistant":
        more = newest.content + f" and more {n}"
        store.save_reply(newest.id, content=more, reasoning="", status="complete")
    elif step == "elsewhere":
        older = store.all_messages(conversation_id)
        if len(older) > 2:
            target = older[n * 7 % (len(older) - 1)]
            other.save_reply(target.id, content=f"changed {n}", reasoning="", status="complete")
    elif step == "edit" and len(branch) > 3:
        replaced = branch[-(n % 3) - 1]
        store.branch_from(conversation_id, replaced.parent_id)
        store.add_message(conversation_id, "user", f"edited {n}")
    elif step == "switch":
        every = store.all_messages(conversation_id)
        if every:
            store.switch_to(every[n * 13 % len(every)].id)
    elif step == "files":
        files = (
            Attachment("notes.txt", "text/plain", b"x" * 300),
            Attachment("a.png", "image/png", PNG),
        )
        store.add_message(conversation_id, "user", f"see files {n}", attachments=files)
    elif step == "context":
        context.tokens = 1_200 if context.tokens == 2_000 else 2_000


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(STEPS), min_size=1, max_size=14), st.booleans())
def test_what_a_kept_read_sends_is_what_a_fresh_read_sends(steps: list[str], typed: bool) -> None:
    with fresh_store() as store:
        other = Store(store.path)
        conversation_id = a_conversation(store, 40)
        context = Context()
        kept = HistoryReader(store, context)
        kept.read(conversation_id, OPENAI, CONFIG)
        for n, step in enumerate(steps, 1):
            take(step, store, other, conversation_id, context, n)
            said = "as typed" if typed else None
            expected = HistoryReader(store, context).read(
                conversation_id, OPENAI, CONFIG, typed=said
            )
            assert shape(kept.read(conversation_id, OPENAI, CONFIG, typed=said)) == shape(
                expected
            ), f"after {steps[:n]}, the kept read sends what a fresh read does"
            assert kept.branch_length(conversation_id) == store.branch.branch_length(
                conversation_id
            ), f"after {steps[:n]}, the kept count is the branch's length"
        other.close()


def test_a_send_after_one_more_message_reads_only_the_messages_since() -> None:
    with fresh_store() as store:
        conversation_id = a_conversation(store, 300)
        reader = HistoryReader(store, Context())
        walks = full_walks(store)
        first = reader.read(conversation_id, OPENAI, CONFIG)
        assert len(walks) == 1
        store.add_message(conversation_id, "assistant", "a reply")
        store.add_message(conversation_id, "user", "one more")
        after = reader.read(conversation_id, OPENAI, CONFIG)
        assert len(walks) == 1, "no second walk back through the conversation"
        assert after.turns[-2:] == tuple(
            HistoryReader(store, Context()).read(conversation_id, OPENAI, CONFIG).turns[-2:]
        )
        assert after.turns[-1].content == "one more" and len(after.turns) <= len(first.turns) + 2


def test_the_branch_is_walked_once_to_count_what_a_trimmed_send_left_out() -> None:
    with fresh_store() as store:
        conversation_id = a_conversation(store, 300)
        reader = HistoryReader(store, Context())
        counts: list[str] = []
        store.connection().set_trace_callback(
            lambda statement: (
                counts.append(statement) if "count(*) FROM branch" in statement else None
            )
        )
        reader.read(conversation_id, OPENAI, CONFIG)
        assert reader.branch_length(conversation_id) == 300
        assert len(counts) == 1
        store.add_message(conversation_id, "user", "one more")
        reader.read(conversation_id, OPENAI, CONFIG)
        store.add_message(conversation_id, "assistant", "")
        assert reader.branch_length(conversation_id) == 302
        assert len(counts) == 1, "counted from the newest message read before, not walked again"


def test_a_read_heavy_with_files_is_not_kept_in_memory() -> None:
    """Images of up to 5 MB each, dozens of which fit a context: what holds more files than
    KEEP_FILES_BYTES is read afresh at each send rather than held between sends."""
    from byok_tui.chat.context_window import KEEP_FILES_BYTES

    with fresh_store() as store:
        conversation_id = a_conversation(store, 4)
        picture = Attachment("big.png", "image/png", PNG + b"\0" * (KEEP_FILES_BYTES // 2))
        for n in range(3):
            store.add_message(conversation_id, "user", f"look {n}", attachments=(picture,))
            store.add_message(conversation_id, "assistant", f"seen {n}")
        reader = HistoryReader(store, Context())
        walks = full_walks(store)
        first = reader.read(conversation_id, OPENAI, CONFIG)
        again = reader.read(conversation_id, OPENAI, CONFIG)
        assert len(walks) == 2, "read afresh: not kept"
        assert shape(first) == shape(again)


def test_an_older_message_changed_by_another_process_is_sent_as_it_now_is() -> None:
    with fresh_store() as store:
        conversation_id = a_conversation(store, 30)
        reader = HistoryReader(store, Context())
        sent = reader.read(conversation_id, OPENAI, CONFIG)
        older = sent.messages[-3]
        other = Store(store.path)
        other.save_reply(older.id, content="rewritten elsewhere", reasoning="", status="complete")
        other.close()
        store.add_message(conversation_id, "user", "one more")
        texts = [t.content for t in reader.read(conversation_id, OPENAI, CONFIG).turns]
        assert "rewritten elsewhere" in texts
        assert older.content not in texts


def test_a_reply_continued_after_the_read_is_sent_continued() -> None:
    with fresh_store() as store:
        conversation_id = a_conversation(store, 30)
        cut = store.add_message(conversation_id, "assistant", "", status="partial")
        store.save_reply(cut.id, content="half", reasoning="", status="partial")
        reader = HistoryReader(store, Context())
        assert "half" not in [t.content for t in reader.read(conversation_id, OPENAI, CONFIG).turns]
        store.save_reply(cut.id, content="half and whole", reasoning="", status="complete")
        store.add_message(conversation_id, "user", "one more")
        texts = [t.content for t in reader.read(conversation_id, OPENAI, CONFIG).turns]
        assert texts[-2:] == ["half and whole", "one more"]


def test_the_revision_counts_changes_to_messages_that_others_follow() -> None:
    """Kept by the database whichever process writes: a reply being written (nothing
    follows it yet) is not a change; an older message rewritten is."""
    with fresh_store() as store:
        conversation_id = a_conversation(store, 4)
        messages = store.all_messages(conversation_id)
        assert store.branch.revision(conversation_id) == 0
        store.save_reply(messages[-1].id, content="newest", reasoning="", status="complete")
        assert store.branch.revision(conversation_id) == 0, "a reply being written is not a change"
        store.save_reply(messages[1].id, content="older", reasoning="", status="complete")
        assert store.branch.revision(conversation_id) == 1
        raw = sqlite3.connect(store.path)
        assert raw.execute("SELECT revision FROM conversations").fetchone() == (1,)
        raw.close()


async def test_a_conversation_opened_in_the_app_is_read_ahead_of_the_send(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Opening a conversation longer than a page reads what its next send carries, in a
    worker, once the opening has settled (READ_AHEAD_AFTER): read while the page was laid
    out, its ~40 ms of Python (100,000 messages) made the opening 50-100 ms longer. The
    send then walks no further back than the messages added since. (One that fits a page
    is read at the send: a millisecond.)"""
    store = open_store(open_services())
    open_key_store(app_paths()).set(entry_name("openai"), "sk-proj-" + "C" * 60)
    bot = store.default_bot("openai", "gpt-5.4-mini")
    conversation = store.create_conversation(bot.id, "long")
    for number in range(PAGE + 40):
        role: Role = "user" if number % 2 == 0 else "assistant"
        store.add_message(conversation.id, role, f"{number}: {WORDS}")
    walks: list[int] = []
    walked_at: list[float] = []
    walk = BranchReader.recent_messages

    def counted(self: BranchReader, conversation_id: int, chars: int, image_chars: int = 0):  # type: ignore[no-untyped-def]
        if chars:
            walks.append(conversation_id)
            walked_at.append(time.monotonic())
        return walk(self, conversation_id, chars, image_chars)

    monkeypatch.setattr(BranchReader, "recent_messages", counted)
    fake = FakeProviders()
    fake.enqueue("the answer")
    app = app_answered_by(fake)
    opened_at: list[float] = []
    opened = chat_column.ChatColumn.opened

    def noted(self: chat_column.ChatColumn, *args: Any) -> None:
        opened_at.append(time.monotonic())
        opened(self, *args)

    monkeypatch.setattr(chat_column.ChatColumn, "opened", noted)
    async with app.run_test(size=(WIDTH_WITHOUT_CONFIG_PANE, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: bool(walks))
        await workers_done(app)
        assert walks == [conversation.id], "read once, after the conversation opened"
        assert walked_at[0] - opened_at[-1] >= column_base.READ_AHEAD_AFTER, (
            "read while the conversation was being opened"
        )
        await send(pilot, "the question")
        await workers_done(app)
        assert walks == [conversation.id], "the send read only the messages added since"
        [request] = fake.requests
        assert request.texts[-2:] == [f"{PAGE + 39}: {WORDS}", "the question"]
