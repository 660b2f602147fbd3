"""Files attached to a message: read once, when attached, and checked by what they hold (an
image's type by its first bytes, never by its name; a text file by being UTF-8 without NUL)
and by size, before anything is sent. No Textual, no network.

A text file goes to the model as a fenced block under its name, in the message's text; an
image in the provider's own image format. A file's text came from outside: it is made
terminal-safe when read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from byok_tui.core.errors import ByokError
from byok_tui.core.paths import FileReadError, read_bounded
from byok_tui.core.sanitize import clean_line, strip_terminal_controls

# Anthropic takes images of up to 5 MB each, the least of the four families (OpenAI 20 MB,
# Gemini 20 MB inline for the whole request, Ollama the model's own): one limit for all.
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_TEXT_BYTES = 512 * 1024  # about 130,000 tokens: more than most context windows hold
MAX_FILES = 10
MAX_TOTAL_BYTES = 20 * 1024 * 1024
TEXT = "text/plain"
IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")
_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
WHAT_IS_TAKEN = "a text file (UTF-8) or an image (PNG, JPEG, WEBP, GIF)"


class AttachmentError(ByokError):
    """A file that cannot be attached, and why: nothing was sent."""


class NoSuchFile(AttachmentError):
    """Nothing at the path (pasted text that only looked like a path, say)."""


@dataclass(frozen=True, slots=True)
class Attachment:
    name: str  # the file's name, one line
    media_type: str  # text/plain, or one of IMAGE_TYPES
    data: bytes = field(repr=False)
    # Where it was read from, while it is attached to a draft ("" once stored or imported):
    # a draft kept for the next start names its files by it.
    path: str = field(default="", repr=False, compare=False)

    @property
    def is_image(self) -> bool:
        return self.media_type != TEXT

    @property
    def text(self) -> str:
        return self.data.decode("utf-8") if not self.is_image else ""

    @property
    def label(self) -> str:
        return size_label(self.name, len(self.data))


def size_label(name: str, size: int) -> str:
    """`notes.md · 12 KB`: how a file attached is named on screen."""
    if size < 1024:
        amount = f"{size:,} B"
    elif size < 1024 * 1024:
        amount = f"{size / 1024:,.0f} KB"
    else:
        amount = f"{size / 1024 / 1024:,.1f} MB"
    return f"{name} · {amount}"


def image_type(data: bytes) -> str | None:
    """The image type `data` holds, by its first bytes (None: not an image taken)."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((kind for signature, kind in _SIGNATURES if data.startswith(signature)), None)


def read_attachment(path: Path) -> Attachment:
    """The file at `path`, checked. Raises AttachmentError saying what is wrong with it."""
    path = path.expanduser()
    name = clean_line(path.name)[:200] or "file"
    try:
        if path.is_dir():
            raise AttachmentError(f"{path} is a folder", remedy=f"Attach {WHAT_IS_TAKEN}.")
        size = path.stat().st_size
        if size > max(MAX_IMAGE_BYTES, MAX_TEXT_BYTES):  # refused before it is read
            raise _too_large(name, size, MAX_IMAGE_BYTES)
        data = read_bounded(path, max(MAX_IMAGE_BYTES, MAX_TEXT_BYTES))
    except FileReadError as error:
        raise AttachmentError(
            f"Cannot attach {path}: {error.strerror}", remedy=f"Attach {WHAT_IS_TAKEN}."
        ) from None
    except FileNotFoundError as error:
        raise NoSuchFile(
            f"Cannot read {path}: {error.strerror}", remedy="Check the path."
        ) from None
    except OSError as error:
        raise AttachmentError(
            f"Cannot read {path}: {error.strerror}",
            remedy="Check the path, and that you can read it.",
        ) from None
    kind = image_type(data)
    if kind is not None:
        if len(data) > MAX_IMAGE_BYTES:
            raise _too_large(name, len(data), MAX_IMAGE_BYTES)
        return Attachment(name, kind, data, str(path.absolute()))
    if b"\x00" in data:
        raise AttachmentError(
            f"{name} is not a file byok-tui can attach", remedy=f"Attach {WHAT_IS_TAKEN}."
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise AttachmentError(
            f"{name} is not UTF-8 text or an image byok-tui can attach",
            remedy=f"Attach {WHAT_IS_TAKEN}.",
        ) from None
    if len(data) > MAX_TEXT_BYTES:
        raise _too_large(name, len(data), MAX_TEXT_BYTES)
    return Attachment(
        name, TEXT, strip_terminal_controls(text).encode("utf-8"), str(path.absolute())
    )


def _too_large(name: str, size: int, most: int) -> AttachmentError:
    return AttachmentError(
        f"{name} is too large to attach ({size / 1024 / 1024:,.1f} MB; at most "
        f"{most / 1024 / 1024:,.1f} MB)",
        remedy="Attach a smaller file, or the part of it that matters.",
    )


def check_together(attachments: list[Attachment]) -> None:
    """The files one message may carry: at most MAX_FILES, MAX_TOTAL_BYTES in all."""
    if len(attachments) > MAX_FILES:
        raise AttachmentError(
            f"A message can carry at most {MAX_FILES} files ({len(attachments)} attached)",
            remedy="Remove some, or send them over several messages.",
        )
    total = sum(len(a.data) for a in attachments)
    if total > MAX_TOTAL_BYTES:
        raise AttachmentError(
            f"The files attached come to {total / 1024 / 1024:,.1f} MB; a message can carry "
            f"{MAX_TOTAL_BYTES // 1024 // 1024} MB",
            remedy="Remove some, or send them over several messages.",
        )


def fenced(attachment: Attachment) -> str:
    """A text file as the model reads it: its name, then its text in a fence longer than any
    run of backticks in it (so that the text cannot close the block early)."""
    longest = max((len(run) for run in re.findall(r"`+", attachment.text)), default=0)
    fence = "`" * max(3, longest + 1)
    # The suffix names the language; nothing else of the name may go into the fence's line.
    language = re.sub(r"[^A-Za-z0-9+#_-]", "", Path(attachment.name).suffix)[:20]
    return f"{attachment.name}:\n\n{fence}{language}\n{attachment.text.rstrip(chr(10))}\n{fence}"


def with_text_files(content: str, attachments: list[Attachment]) -> str:
    """A message's text with its text files after it, each as a fenced block."""
    blocks = [fenced(a) for a in attachments if not a.is_image]
    return "\n\n".join([content, *blocks]) if blocks else content


def pasted_path(text: str) -> Path | None:
    """The file a paste names, if it is one path and nothing else: how terminals hand over a
    file dropped on them (`/a/b.png`, `'/a/my file.png'`, `/a/my\\ file.png`,
    `file:///a/b.png`). None when it reads as text to type (it may still name no file)."""
    from urllib.parse import unquote, urlsplit

    text = text.strip()
    if not text or "\n" in text:
        return None
    if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    elif text.startswith("file://"):
        text = unquote(urlsplit(text).path)
    elif " " in text.replace("\\ ", ""):
        return None  # words with spaces between them: text, not a path
    text = text.replace("\\ ", " ")
    if not text.startswith(("/", "~/")):
        return None
    return Path(text)
