"""What the model is shown of a conversation: the branch's messages with their files (text
files in the text, images beside it), and which reply can be continued. No I/O, no Textual.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from byok_tui.attachments import Attachment, AttachmentError, with_text_files
from byok_tui.errors import ByokError
from byok_tui.providers.types import ChatMessage, Image, Role
from byok_tui.records import Message
from byok_tui.registry import Provider, providers


def history_for(
    messages: list[Message],
    attached: Mapping[int, list[Attachment]] | None = None,
    *,
    images: bool = True,
) -> tuple[ChatMessage, ...]:
    """What the model is shown: user messages and completed replies, in order, each with
    its files (`attached`, by message id): text files in its text, images beside it. With
    `images` False (a model that takes none), an earlier image is named in the text instead.

    Failed and partial replies are left out (a retry re-sends the user message once, as it
    adds no new one).
    """
    attached = attached or {}
    return tuple(
        turn(m.role, m.content, attached.get(m.id, []), images=images)
        for m in messages
        if m.role == "user" or m.status == "complete"
    )


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


def continuable(messages: list[Message], reply_id: int) -> Message:
    """The reply `reply_id` of the branch `messages`, if it can be continued: the last
    message, a reply cut short with text to continue. Raises ByokError saying why not."""
    reply = next((m for m in messages if m.id == reply_id), None)
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
    if messages[-1].id != reply.id:
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
