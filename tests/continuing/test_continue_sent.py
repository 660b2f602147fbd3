"""Continuing a reply cut short: what each provider family is sent (against a loopback
server), and what is stored: the same reply, grown, complete, with the counts of both
requests."""

from __future__ import annotations

from typing import Any

import pytest

from byok_tui.app_services.services import open_services, open_store
from byok_tui.chat.conversation import ConversationService
from byok_tui.chat.outgoing import Outgoing
from byok_tui.core.errors import ByokError
from byok_tui.core.records import BotConfig, Conversation, Message
from byok_tui.providers.wire.common import CONTINUE_INSTRUCTION
from byok_tui.storage.store import Store
from tests.support.family_replies import FAMILIES, family_reply
from tests.support.provider_client import client_for
from tests.support.provider_server import ProviderServer

CUT = "The answer is "  # cut after a space: a prefill may not end in one


def cut_conversation(
    store: Store, provider_id: str, model: str, *, status: str = "partial"
) -> tuple[Conversation, Message]:
    bot = store.create_bot(BotConfig("Cut", provider_id, model))
    conversation = store.create_conversation(bot.id, "cut")
    store.add_message(conversation.id, "user", "What is six times seven?")
    reply = store.add_message(
        conversation.id, "assistant", "", status="partial", provider=provider_id, model=model
    )
    store.save_reply(
        reply.id,
        content=CUT,
        reasoning="",
        status=status,  # type: ignore[arg-type]
        error_kind="truncated",
        error_message="stopped before the reply finished",
    )
    return conversation, store.message(reply.id)


async def continue_it(
    server: ProviderServer, provider_id: str, conversation: Conversation, reply_id: int
) -> list[Any]:
    services = open_services()
    store = open_store(services)
    bot = store.bot(conversation.bot_id)
    async with client_for(provider_id, server, services.keys) as client:
        service = ConversationService(store, client)
        return [event async for event in service.continue_reply(bot, conversation, reply_id)]


def sent_turns(provider_id: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    """(role, text) of each turn a family's request body carries."""
    if provider_id == "google":
        return [(turn["role"], turn["parts"][0]["text"]) for turn in body["contents"]]
    return [(turn["role"], turn["content"]) for turn in body["messages"]]


@pytest.mark.parametrize("provider_id", FAMILIES)
async def test_a_cut_reply_is_sent_as_the_last_turn_and_continued_in_place(
    server: ProviderServer, provider_id: str
) -> None:
    """Anthropic is handed the cut reply as the start of its answer (without the trailing
    space it refuses); the others get it as their last turn and an instruction to go on."""
    store = open_store(open_services())
    conversation, cut = cut_conversation(store, provider_id, FAMILIES[provider_id])
    answer = " 42." if provider_id == "anthropic" else "42."
    server.reply_with(family_reply(provider_id, answer))

    await continue_it(server, provider_id, conversation, cut.id)

    turns = sent_turns(provider_id, server.requests[0].json)
    question = ("user", "What is six times seven?")
    if provider_id == "anthropic":
        assert turns == [question, ("assistant", "The answer is")]
    else:
        said = "model" if provider_id == "google" else "assistant"
        assert turns == [question, (said, CUT), ("user", CONTINUE_INSTRUCTION)]
    [_, reply] = store.messages(conversation.id)
    assert reply.id == cut.id, "the same reply grows: no new message"
    assert reply.content == "The answer is 42."
    assert (reply.status, reply.error_kind, reply.error_message) == ("complete", None, None)


async def test_the_counts_and_cost_of_a_continued_reply_are_those_of_both_requests(
    server: ProviderServer,
) -> None:
    store = open_store(open_services())
    conversation, cut = cut_conversation(store, "anthropic", "claude-sonnet-4-6")
    from byok_tui.providers.types import Usage

    store.save_reply(cut.id, content=CUT, reasoning="", status="partial", usage=Usage(100, 20))
    server.reply_with(family_reply("anthropic", " 42."))  # 9 in, 4 out
    await continue_it(server, "anthropic", conversation, cut.id)
    reply = store.message(cut.id)
    assert (reply.input_tokens, reply.output_tokens) == (109, 24)
    from byok_tui.spend.pricing import cost_of

    first = cost_of("anthropic", "claude-sonnet-4-6", Usage(100, 20)).usd
    second = cost_of("anthropic", "claude-sonnet-4-6", Usage(9, 4)).usd
    assert first and second and reply.cost_usd == pytest.approx(first + second)


@pytest.mark.parametrize("provider_id", ["openai", "anthropic", "google", "ollama"])
async def test_a_reply_at_the_length_limit_is_kept_partial_and_says_it_can_be_continued(
    server: ProviderServer, provider_id: str
) -> None:
    """Each family's word for the length limit (length, max_tokens, MAX_TOKENS) leaves the
    reply partial, with a message that says how to continue it."""
    services = open_services()
    store = open_store(services)
    bot = store.create_bot(BotConfig("Short", provider_id, FAMILIES[provider_id], max_tokens=8))
    conversation = store.create_conversation(bot.id, "short")
    server.reply_with(family_reply(provider_id, "A long answer that", at_length_limit=True))
    async with client_for(provider_id, server, services.keys) as client:
        async for _event in ConversationService(store, client).send(
            bot, conversation, Outgoing("Tell")
        ):
            pass
    reply = store.messages(conversation.id)[-1]
    assert (reply.status, reply.content) == ("partial", "A long answer that")
    assert reply.error_message is not None
    assert reply.error_message.startswith("The reply reached the length limit (8 tokens).")
    assert "ask --continue" in reply.error_message


async def test_only_the_last_reply_cut_short_can_be_continued_and_nothing_is_sent_otherwise(
    server: ProviderServer,
) -> None:
    store = open_store(open_services())
    conversation, cut = cut_conversation(store, "openai", "gpt-5.5")
    question = store.messages(conversation.id)[0]
    with pytest.raises(ByokError, match="Only a reply can be continued"):
        await continue_it(server, "openai", conversation, question.id)
    store.save_reply(cut.id, content=CUT, reasoning="", status="complete")
    with pytest.raises(ByokError, match="This reply is complete"):
        await continue_it(server, "openai", conversation, cut.id)
    store.save_reply(cut.id, content=CUT, reasoning="", status="partial")
    store.add_message(conversation.id, "user", "Never mind")
    with pytest.raises(ByokError, match="Only the last reply"):
        await continue_it(server, "openai", conversation, cut.id)
    with pytest.raises(ByokError, match="not in the conversation on screen"):
        await continue_it(server, "openai", conversation, 999)
    assert server.requests == []
    assert store.message(cut.id).content == CUT, "left as it was"


async def test_a_continuation_cut_in_turn_keeps_both_parts_and_can_be_continued_again(
    server: ProviderServer,
) -> None:
    from tests.support.provider_server import openai_reply

    store = open_store(open_services())
    conversation, cut = cut_conversation(store, "openai", "gpt-5.5")
    server.reply_with(openai_reply("42", finish=False))
    with pytest.raises(ByokError):
        await continue_it(server, "openai", conversation, cut.id)
    reply = store.message(cut.id)
    assert (reply.content, reply.status) == ("The answer is 42", "partial")
    server.reply_with(openai_reply("."))
    await continue_it(server, "openai", conversation, cut.id)
    assert store.message(cut.id).content == "The answer is 42."
    assert server.requests[1].json["messages"][-2]["content"] == "The answer is 42"
