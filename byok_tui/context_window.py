"""What a send reads of a conversation: its newest messages, as many as fit the model's
context window, however long the conversation is; and the notice when older ones are left
out. Runs in a worker thread (it reads the database); no Textual.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from byok_tui.estimate import CHARS_PER_TOKEN
from byok_tui.history import IMAGE_TOKENS, ContextRoom, fit_to_context, history_for, turn
from byok_tui.providers.types import ChatMessage
from byok_tui.records import BotConfig, Message
from byok_tui.registry import CONTEXT_TOKENS, Provider
from byok_tui.storage.store import Store

# The context a provider's model list stated for a model (None: it said nothing).
ListedContext = Callable[[Provider, str], "int | None"]


@dataclass(frozen=True, slots=True)
class SentHistory:
    """What a request carries of its conversation, read from its newest message back."""

    messages: list[Message]  # the messages read (newest last)
    turns: tuple[ChatMessage, ...]  # what is sent of them
    left_out: ContextRoom | None  # the room that older messages did not fit, if any did not


def room_for(provider: Provider | None, config: BotConfig, listed: ListedContext) -> ContextRoom:
    """`provider` None: one the registry does not know (defined by the user, removed since)."""
    if provider is None:
        context = CONTEXT_TOKENS
    else:
        context = provider.context_of(config.model, listed(provider, config.model))
    return ContextRoom.of(config.model, context, config.max_tokens, config.system_prompt)


def read_history(
    store: Store,
    conversation_id: int,
    provider: Provider | None,
    config: BotConfig,
    listed: ListedContext,
    *,
    typed: str | None = None,
    last_turn: ChatMessage | None = None,
) -> SentHistory:
    """The newest messages of the branch on screen that fit the model's context, as turns.
    `typed`: the user's message as typed (it is stored with any key scrubbed, but sent as
    typed: the user confirmed a key in it); `last_turn`: a turn after the stored ones (the
    reply being continued, which then is not read as a message). `provider` None: one the
    registry does not know (its models' window is taken as the smallest, CONTEXT_TOKENS)."""
    room = room_for(provider, config, listed)
    messages, whole = store.branch.recent_messages(
        conversation_id, room.chars_to_read, IMAGE_TOKENS * CHARS_PER_TOKEN
    )
    earlier = messages[:-1] if last_turn is not None else messages
    attached = store.branch.attachments_of([m.id for m in earlier])
    images = provider is None or provider.model(config.model).takes_images is not False
    turns = history_for(earlier, attached, images=images)
    if last_turn is not None:
        turns = (*turns, last_turn)
    elif typed is not None and turns:
        files = attached.get(earlier[-1].id, [])
        turns = (*turns[:-1], turn("user", typed, files, images=images))
    sent = fit_to_context(turns, room.tokens)
    left_out = not whole or len(sent) < len(turns)
    return SentHistory(messages, sent, room if left_out else None)
