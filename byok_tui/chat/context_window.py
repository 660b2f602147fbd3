"""What a send reads of a conversation: its newest messages, as many as fit the model's
context window, however long the conversation is; and the notice when older ones are left
out. What was read is kept for the next send, which then reads only what follows it. Runs
in worker threads (it reads the database); no Textual.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from byok_tui.chat.history import (
    IMAGE_TOKENS,
    ContextRoom,
    fit_to_context,
    sent_of,
    turn,
    turn_tokens,
)
from byok_tui.chat.tool_history import turn_tool_chars
from byok_tui.core.attachments import Attachment
from byok_tui.core.records import BotConfig, Message
from byok_tui.core.registry import CONTEXT_TOKENS, Provider
from byok_tui.providers.types import ChatMessage
from byok_tui.spend.estimate import CHARS_PER_TOKEN
from byok_tui.storage.store import Store

# The context a provider's model list stated for a model (None: it said nothing).
ListedContext = Callable[[Provider, str], "int | None"]
# What an image counts for against the text read back for a send.
IMAGE_CHARS = IMAGE_TOKENS * CHARS_PER_TOKEN
# How far back from the newest message a send looks for the newest one read before: a send
# adds two (the user's, the reply); not found there, it is another branch, or much was
# written since, and the history is read afresh.
SINCE_MOST = 64
# The most file bytes a read kept between sends may hold: images of up to 5 MB each, dozens
# of which fit a model's context, would stay in memory for as long as the conversation is
# open. A read holding more is read afresh at each send, as every read once was.
KEEP_FILES_BYTES = 16 * 1024 * 1024


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


@dataclass(frozen=True, slots=True)
class _Read:
    """One message as read for a send, with what is sent of it."""

    message: Message
    files: list[Attachment]
    size: int  # what it counts for against the text read back (chars_to_read)
    turns: tuple[ChatMessage, ...]  # none: not sent (a failed or partial reply)
    tokens: tuple[int, ...]  # each turn's estimate


@dataclass(frozen=True, slots=True)
class _Kept:
    """What the last read found, and what vouches for it still being so."""

    conversation_id: int
    revision: int  # the conversation's revision read before its messages
    chars: int  # the text it read back
    images: bool  # whether its turns carry images
    reads: list[_Read]  # newest last
    whole: bool  # whether it reached the conversation's first message
    length: int | None = None  # the branch's messages up to the newest read, once counted


class HistoryReader:
    """What sends (and estimates) read of a conversation. The last conversation's read is
    kept: the next read walks back from the newest message only to the newest one read
    before, and takes the rest as kept while the conversation's revision is unchanged (the
    database counts every change to a message that others follow, from any process). Anything
    else (another branch, another conversation, a larger context) is read afresh. Safe to
    call from several threads."""

    def __init__(self, store: Store, listed: ListedContext) -> None:
        self._store = store
        self._listed = listed
        self._lock = threading.Lock()
        self._kept: _Kept | None = None

    def read(
        self,
        conversation_id: int,
        provider: Provider | None,
        config: BotConfig,
        *,
        typed: str | None = None,
        last_turns: tuple[ChatMessage, ...] = (),
    ) -> SentHistory:
        """The newest messages of the branch on screen that fit the model's context, as
        turns. `typed`: the user's message as typed (it is stored with any key scrubbed, but
        sent as typed: the user confirmed a key in it); `last_turns`: turns after the stored
        ones (the reply being continued, which then is not read as a message). `provider`
        None: one the registry does not know (its models' window is taken as the smallest,
        CONTEXT_TOKENS)."""
        room = room_for(provider, config, self._listed)
        images = provider is None or provider.model(config.model).takes_images is not False
        with self._lock:
            reads, whole = self._newest(conversation_id, room.chars_to_read, images)
        earlier = reads[:-1] if last_turns else reads
        turns = [turn for read in earlier for turn in read.turns]
        costs = [tokens for read in earlier for tokens in read.tokens]
        if last_turns:
            turns += last_turns
            costs += [turn_tokens(t) for t in last_turns]
        elif typed is not None and turns:
            turns[-1] = turn("user", typed, earlier[-1].files, images=images)
            costs[-1] = turn_tokens(turns[-1])
        sent = fit_to_context(turns, room.tokens, costs)
        left_out = not whole or len(sent) < len(turns)
        return SentHistory([read.message for read in reads], sent, room if left_out else None)

    def _newest(self, conversation_id: int, chars: int, images: bool) -> tuple[list[_Read], bool]:
        branch = self._store.branch
        revision = branch.revision(conversation_id)  # before the messages it vouches for
        kept, reads, length = self._kept, None, None
        since = None
        if kept is not None and kept.images == images and (kept.whole or chars <= kept.chars):
            since = self._since(kept, conversation_id, revision)
        if kept is not None and since is not None:
            # The newest message read before is read again (a reply may have grown).
            reads = kept.reads[:-1] + self._reads_of(since, images)
            length = None if kept.length is None else kept.length + len(since) - 1
        if reads is None:
            messages, _whole = branch.recent_messages(conversation_id, chars, IMAGE_CHARS)
            reads = self._reads_of(messages, images)
        reads = _within(reads, chars)
        whole = not reads or reads[0].message.parent_id is None
        held = sum(len(file.data) for read in reads for file in read.files)
        if revision is None or held > KEEP_FILES_BYTES:
            self._kept = None
        else:
            self._kept = _Kept(conversation_id, revision, chars, images, reads, whole, length)
        return reads, whole

    def branch_length(self, conversation_id: int) -> int:
        """How many messages the branch on screen holds. The whole branch is walked once
        (~45 ms for 100,000 messages, ten times that for a million), up to the newest
        message read before, and kept; later counts add the messages since."""
        branch = self._store.branch
        revision = branch.revision(conversation_id)
        with self._lock:
            kept = self._kept
            since = None if kept is None else self._since(kept, conversation_id, revision)
        if kept is None or since is None:
            return branch.branch_length(conversation_id)
        length = kept.length
        if length is None:
            length = branch.length_to(kept.reads[-1].message.id)
            with self._lock:
                if self._kept is kept:
                    self._kept = replace(kept, length=length)
        return length + len(since) - 1

    def _since(
        self, kept: _Kept, conversation_id: int, revision: int | None
    ) -> list[Message] | None:
        """The branch from the newest message `kept` read to its newest now; None when what
        was kept no longer holds (another conversation or branch, or a message changed)."""
        if not kept.reads or (kept.conversation_id, kept.revision) != (conversation_id, revision):
            return None
        anchor = kept.reads[-1].message.id
        return self._store.branch.messages_since(conversation_id, anchor, SINCE_MOST)

    def _reads_of(self, messages: list[Message], images: bool) -> list[_Read]:
        branch = self._store.branch
        attached = branch.attachments_of([m.id for m in messages])
        rounds = branch.tool_turns_of([m.id for m in messages if m.role == "assistant"])
        reads = []
        for message in messages:
            files = attached.get(message.id, [])
            size = len(message.content)
            size += sum(IMAGE_CHARS if file.is_image else len(file.data) for file in files)
            sent = sent_of(message, files, images=images, tool_rounds=rounds.get(message.id))
            size += sum(turn_tool_chars(t) for t in sent)
            reads.append(_Read(message, files, size, sent, tuple(turn_tokens(t) for t in sent)))
        return reads


def _within(reads: Sequence[_Read], chars: int) -> list[_Read]:
    """The newest of `reads` as the database's walk reads them: back from the newest until
    their text and files pass `chars`, the one that passes it included."""
    total = 0
    first = len(reads)
    while first > 0 and (first == len(reads) or total <= chars):
        first -= 1
        total += reads[first].size
    return list(reads[first:])
