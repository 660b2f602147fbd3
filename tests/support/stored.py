"""Conversations written straight to the database, as tests need them."""

from __future__ import annotations

from byok_tui.app_services.services import open_services, open_store
from byok_tui.core.paths import app_paths
from byok_tui.core.records import Conversation, Message
from byok_tui.keys import entry_name, open_key_store
from byok_tui.storage.store import Store


def one_exchange(key: str, title: str) -> tuple[Store, Conversation]:
    """OpenAI's key stored, and a conversation `title` of the Default bot (gpt-5.5) holding
    one question, Q1, and its answer, A1."""
    open_key_store(app_paths()).set(entry_name("openai"), key)
    store = open_store(open_services())
    bot = store.default_bot("openai", "gpt-5.5")
    conversation = store.create_conversation(bot.id, title)
    store.add_message(conversation.id, "user", "Q1")
    store.add_message(conversation.id, "assistant", "A1")
    return store, conversation


def add_cut_reply(
    store: Store,
    conversation_id: int,
    text: str,
    *,
    provider: str = "openai",
    model: str = "gpt-5.5",
    error_kind: str | None = "truncated",
    error_message: str | None = "stopped before the reply finished",
) -> Message:
    """A reply cut short after `text`, as a stop or a dropped connection leaves it."""
    cut = store.add_message(
        conversation_id, "assistant", "", status="partial", provider=provider, model=model
    )
    store.save_reply(
        cut.id,
        content=text,
        reasoning="",
        status="partial",
        error_kind=error_kind,
        error_message=error_message,
    )
    return store.message(cut.id)


def alternatives(store: Store, conversation_id: int) -> dict[int, tuple[int, int]]:
    """Every message of the conversation (any branch) that has alternatives: its place among
    them and how many there are, as the transcript reads them."""
    every = [m.id for m in store.all_messages(conversation_id)]
    return store.branch.alternatives_of(every)


def stored_messages() -> list[Message]:
    """The messages of the first bot's first conversation, as the app stored them."""
    store = open_store(open_services())
    bot = store.bots()[0]
    return store.messages(store.conversations(bot.id)[0].id)
