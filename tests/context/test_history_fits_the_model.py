"""What a send carries of a long conversation: the system prompt and the newest turns that
fit the model's context window (the registry's figure, else the provider's model list's,
else the provider's), read from the newest message back in a worker thread; and a notice
saying how many were left out. Against a loopback server: the request bodies are real."""

from __future__ import annotations

from typing import Any

import pytest

from byok_tui.app_services.services import model_cache, open_services, open_store
from byok_tui.chat.conversation import ConversationService
from byok_tui.chat.history import HistoryTrimmed
from byok_tui.chat.outgoing import Outgoing
from byok_tui.core.records import BotConfig, Budget, Conversation
from byok_tui.core.registry import get_provider
from byok_tui.keys import KeyStore
from byok_tui.keys.file_store import FileKeyStore
from byok_tui.keys.index import set_failover
from byok_tui.providers.model_cache import ModelCache
from byok_tui.providers.types import ListedModel, Role
from byok_tui.storage.branch import BranchReader
from byok_tui.storage.key_health import KeyHealthBook
from byok_tui.storage.ledger import Ledger
from byok_tui.storage.store import Store
from tests.support.family_replies import FAMILIES, family_reply
from tests.support.provider_client import client_for
from tests.support.provider_server import ProviderServer
from tests.support.threads import calls_on_this_thread

WORDS = "word " * 79 + "end"  # 400 characters: 104 tokens by the estimate, with framing


def long_conversation(
    store: Store, provider_id: str, model: str, messages: int, *, max_tokens: int = 100
) -> tuple[BotConfig, Conversation]:
    config = BotConfig("Long", provider_id, model, max_tokens=max_tokens)
    bot = store.create_bot(config)
    conversation = store.create_conversation(bot.id, "long")
    for number in range(messages):
        role: Role = "user" if number % 2 == 0 else "assistant"
        store.add_message(conversation.id, role, f"{number}: {WORDS}")
    return config, conversation


async def send(
    server: ProviderServer,
    provider_id: str,
    conversation: Conversation,
    text: str,
    context: int | None,
) -> list[Any]:
    services = open_services()
    store = open_store(services)
    bot = store.bot(conversation.bot_id)
    async with client_for(provider_id, server, services.keys) as client:
        service = ConversationService(store, client, lambda provider, model: context)
        return [event async for event in service.send(bot, conversation, Outgoing(text))]


def sent_texts(provider_id: str, body: dict[str, Any]) -> list[str]:
    if provider_id == "google":
        return [turn["parts"][0]["text"] for turn in body["contents"]]
    return [turn["content"] for turn in body["messages"]]


@pytest.mark.parametrize("provider_id", FAMILIES)
async def test_a_long_conversation_sends_the_newest_turns_that_fit_and_says_so(
    server: ProviderServer, provider_id: str
) -> None:
    """2,000 tokens of context, 100 kept for the reply: 85 % of the rest is 1,615 tokens of
    history by the estimate, fifteen 104-token turns; the first one sent is the user's."""
    store = open_store(open_services())
    model = "a-model-the-registry-does-not-list"
    _config, conversation = long_conversation(store, provider_id, model, 300)
    server.reply_with(family_reply(provider_id, "ok"))

    events = await send(server, provider_id, conversation, "the question", context=2_000)

    texts = sent_texts(provider_id, server.requests[0].json)
    assert texts[-1] == "the question"
    assert len(texts) == 15, "as many as fit, and no more"
    assert texts[0].startswith("286: "), "the newest ones, starting with one of the user's"
    assert [int(t.split(":")[0]) for t in texts[:-1]] == list(range(286, 300))
    [trimmed] = [e for e in events if isinstance(e, HistoryTrimmed)]
    assert (trimmed.sent, trimmed.total) == (15, 301)
    assert trimmed.notice == (
        "sent the last 15 of 301 messages: the rest does not fit "
        "a-model-the-registry-does-not-list's context (2,000 tokens)"
    )
    [_, reply] = store.messages(conversation.id)[-2:]
    assert (reply.content, reply.status) == ("ok", "complete")


async def test_a_conversation_that_fits_is_sent_whole_without_a_notice(
    server: ProviderServer,
) -> None:
    store = open_store(open_services())
    _config, conversation = long_conversation(store, "openai", "gpt-5.5", 10)
    server.reply_with(family_reply("openai", "ok"))

    events = await send(server, "openai", conversation, "the question", context=None)

    assert len(sent_texts("openai", server.requests[0].json)) == 11
    assert not [e for e in events if isinstance(e, HistoryTrimmed)]


async def test_the_system_prompt_and_the_reply_length_take_their_room_first(
    server: ProviderServer,
) -> None:
    """The same 2,000 tokens with a 400-token system prompt and 500 kept for the reply:
    (2,000 - 500) x 0.85 - 404 = 871 tokens: the question (7) and eight 104-token turns."""
    services = open_services()
    store = open_store(services)
    bot = store.create_bot(BotConfig("Long", "openai", "m", "s" * 1_600, None, 500))
    conversation = store.create_conversation(bot.id, "long")
    for number in range(40):
        role: Role = "user" if number % 2 == 0 else "assistant"
        store.add_message(conversation.id, role, f"{number}: {WORDS}")
    server.reply_with(family_reply("openai", "ok"))

    await send(server, "openai", conversation, "the question", context=2_000)

    body = server.requests[0].json
    assert body["messages"][0] == {"role": "system", "content": "s" * 1_600}
    texts = [m["content"] for m in body["messages"][1:]]
    assert [t.split(":")[0] for t in texts[:-1]] == [str(n) for n in range(32, 40)]


async def test_the_database_is_read_and_written_off_the_event_loop(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A send in a conversation of any length never holds up the screen: every read and
    write of the database before the request happens in a worker thread, and the whole
    branch is never read."""
    store = open_store(open_services())
    _config, conversation = long_conversation(store, "openai", "gpt-5.5", 6)
    server.reply_with(family_reply("openai", "ok"))
    on_the_loop = calls_on_this_thread(
        monkeypatch,
        [
            (BranchReader, "recent_messages"),
            (BranchReader, "attachments_of"),
            (Store, "add_message"),
            (Store, "branch_from"),
            (Store, "message"),
        ],
    )

    def whole_branch(self: Store, conversation_id: int) -> None:
        raise AssertionError("a send read the whole branch")

    monkeypatch.setattr(Store, "messages", whole_branch)

    await send(server, "openai", conversation, "the question", context=None)

    assert len(server.requests) == 1
    assert on_the_loop == []


async def test_the_keys_the_budgets_and_failover_are_read_off_the_event_loop(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before a send, the key store (a keyring may answer slowly), the key index, the
    budgets' spend (a scan of the period's replies) and the keys' health are read in a
    worker thread: never while the screen waits."""
    services = open_services()
    store = open_store(services)
    _config, conversation = long_conversation(store, "openai", "gpt-5.5", 6)
    store.ledger.set_budget(Budget("openai", 100.0, "month"))
    set_failover(services.keys, "openai", True)
    server.reply_with(family_reply("openai", "ok"))
    async with client_for("openai", server, services.keys) as client:
        on_the_loop = calls_on_this_thread(
            monkeypatch,
            [
                (KeyStore, "get"),
                (KeyStore, "get_text"),
                (FileKeyStore, "load"),
                (Ledger, "budgets"),
                (Ledger, "spent_since"),
                (Store, "bot_key"),
                (KeyHealthBook, "of_provider"),
            ],
        )
        service = ConversationService(store, client, lambda provider, model: None)
        bot = store.bot(conversation.bot_id)
        [event async for event in service.send(bot, conversation, Outgoing("the question"))]

    assert len(server.requests) == 1
    assert on_the_loop == []


def test_a_models_context_is_the_registrys_then_the_model_lists_then_the_providers() -> None:
    openai = get_provider("openai")
    assert openai.context_of("gpt-5.5", listed=4_096) == 1_000_000, "the registry's first"
    assert openai.context_of("not-listed", listed=4_096) == 4_096, "then the model list's"
    assert openai.context_of("not-listed") == openai.context_tokens == 128_000


def test_the_model_lists_context_is_read_from_the_cache() -> None:
    cache: ModelCache = model_cache(open_services())
    cache.put("openrouter", [ListedModel("some/model", "Some model", context_length=8_192)])
    openrouter = get_provider("openrouter")
    assert cache.context_of(openrouter, "some/model") == 8_192
    assert cache.context_of(openrouter, "other/model") is None
    assert cache.context_of(get_provider("groq"), "some/model") is None
