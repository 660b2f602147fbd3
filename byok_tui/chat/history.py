"""What the model is shown of a conversation: the branch's messages with their files (text
files in the text, images beside it), as many of the latest as fit the model's context, and
which reply can be continued. No I/O, no Textual.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from byok_tui.chat.tool_history import reply_turns, turn_tool_chars
from byok_tui.core.attachments import Attachment, AttachmentError, with_text_files
from byok_tui.core.errors import ByokError
from byok_tui.core.records import Message
from byok_tui.core.registry import Provider, providers
from byok_tui.providers.types import ChatMessage, Image, Role
from byok_tui.spend.estimate import CHARS_PER_TOKEN, estimated_tokens


def sent_of(
    message: Message, files: list[Attachment], *, images: bool, tool_rounds: Any = None
) -> tuple[ChatMessage, ...]:
    """What the model is shown of one message: a user message or a completed reply, with its
    files (text files in its text, images beside it; with `images` False, a model that takes
    none, an image is named in the text instead); a reply that called tools (`tool_rounds`,
    as stored) as its rounds' turns. Nothing for a failed or partial reply: a retry re-sends
    the user message once, as it adds no new one."""
    if message.role == "assistant" and message.status != "complete":
        return ()
    if message.role == "assistant" and tool_rounds:
        rounds = reply_turns(message.content, tool_rounds)
        if rounds is not None:
            return rounds
    return (turn(message.role, message.content, files, images=images),)


# What an image counts for, in tokens: the most any of the four families charges for one
# of the size byok-tui sends (Anthropic's ~1,600 for a 1.15-megapixel picture).
IMAGE_TOKENS = 1_600
# The share of the context the history may fill by the estimate (about four characters a
# token is an average, and code or other scripts take more): a request trimmed to fit is
# then not refused as too long.
ESTIMATE_MARGIN = 0.85


@dataclass(frozen=True, slots=True)
class ContextRoom:
    """How much history a request to a model can carry, in estimated tokens."""

    model: str
    context_tokens: int
    tokens: int

    @classmethod
    def of(cls, model: str, context_tokens: int, max_tokens: int, system: str) -> ContextRoom:
        """The context less the reply's room (`max_tokens`) and the system prompt."""
        room = int((context_tokens - max_tokens) * ESTIMATE_MARGIN) - estimated_tokens([system])
        return cls(model, context_tokens, max(room, 0))

    @property
    def chars_to_read(self) -> int:
        """How much stored text to read back from the newest message: what the estimate
        counts as the room (it counts every message as at least its length over four), so
        the estimate, not the read, decides what fits."""
        return self.tokens * CHARS_PER_TOKEN


@dataclass(frozen=True, slots=True)
class HistoryTrimmed:
    """Older messages were not sent: they do not fit the model's context window."""

    sent: int  # messages sent (the newest)
    total: int | None  # messages in the branch on screen (None: they could not be counted)
    model: str
    context_tokens: int

    @property
    def notice(self) -> str:
        of = f" of {self.total:,}" if self.total is not None else ""
        return (
            f"sent the last {self.sent:,}{of} messages: the rest does not fit "
            f"{self.model}'s context ({self.context_tokens:,} tokens)"
        )


def turn_tokens(message: ChatMessage) -> int:
    """A turn's estimated tokens: its text and its images."""
    text = estimated_tokens([message.content or " "])
    if message.tool_calls or message.tool_results:
        text += turn_tool_chars(message) // CHARS_PER_TOKEN
    return text + IMAGE_TOKENS * len(message.images)


def fit_to_context(
    turns: Sequence[ChatMessage], room: int, costs: Sequence[int] | None = None
) -> tuple[ChatMessage, ...]:
    """The latest `turns` that fit in `room` tokens, starting with one of the user's (every
    family wants the user to speak first). The last turn is always kept: a message too long
    on its own is the provider's to refuse, with its own words. `costs`: each turn's
    turn_tokens, when already counted."""
    kept: list[ChatMessage] = []
    used = 0
    for place in range(len(turns) - 1, -1, -1):
        message = turns[place]
        cost = turn_tokens(message) if costs is None else costs[place]
        if kept and used + cost > room:
            break
        kept.append(message)
        used += cost
    kept.reverse()
    # Every family wants the user to speak first: not the results of a call cut off.
    while len(kept) > 1 and (kept[0].role != "user" or kept[0].tool_results):
        kept.pop(0)
    return tuple(kept)


def turn(
    role: Role, content: str, attachments: list[Attachment], *, images: bool = True
) -> ChatMessage:
    """One message as sent: text files fenced after its text, images in their own place."""
    text = with_text_files(content, attachments)
    pictures = [a for a in attachments if a.is_image]
    if not images and pictures:
        named = ", ".join(a.name for a in pictures)
        return ChatMessage(role, f"{text}\n\n[images not sent, as this model takes none: {named}]")
    return ChatMessage(role, text, tuple(Image(a.media_type, a.data) for a in pictures))


def check_images(provider: Provider, model_id: str, attachments: Sequence[Attachment]) -> None:
    """An image for a model known to take none is refused before anything is stored or sent,
    naming models that take them."""
    if provider.model(model_id).takes_images is not False or not any(
        a.is_image for a in attachments
    ):
        return
    takers = []
    for candidate in providers():
        listed = [m for m in candidate.models if m.takes_images]
        default = next((m for m in listed if m.id == candidate.default_model), None)
        if listed:
            takers.append(f"{candidate.id}:{(default or listed[0]).id}")
    raise AttachmentError(
        f"{model_id} ({provider.display_name}) takes no images; nothing was sent",
        remedy=f"Choose a model that does ({', '.join(takers[:4])}), or remove the image.",
    )


def continuable(reply: Message | None, reply_id: int, last_id: int | None) -> Message:
    """The reply `reply_id` (`reply`: as stored, None when it is not in the conversation),
    if it can be continued: the conversation's last message (`last_id`), a reply cut short
    with text to continue. Raises ByokError saying why not."""
    if reply is None:
        raise ByokError(
            f"Message {reply_id} is not in the conversation on screen",
            remedy="Open the conversation, or switch to the branch that holds it.",
        )
    if reply.role != "assistant":
        raise ByokError("Only a reply can be continued", remedy="Edit your message instead.")
    if reply.status == "complete":
        raise ByokError(
            "This reply is complete: there is nothing to continue",
            remedy="Regenerate it (r on the reply) for another answer.",
        )
    if not reply.content:
        raise ByokError(
            "This reply has no text to continue",
            remedy="Send the message again instead (ctrl+r in the app).",
        )
    if last_id != reply.id:
        raise ByokError(
            "Only the last reply of the conversation can be continued",
            remedy="Messages follow this one: regenerate it (r) for a new answer instead.",
        )
    if not reply.provider or not reply.model:
        raise ByokError(
            "The model that wrote this reply is not known, so it cannot continue it",
            remedy="Regenerate it (r on the reply) instead.",
        )
    return reply
