"""Attaching a file: its kind is read from what it holds (never from its name), its size is
checked before it is read whole, and a text file reaches the model as a fenced block that
its own text cannot close."""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from byok_tui.core.attachments import (
    MAX_FILES,
    MAX_IMAGE_BYTES,
    Attachment,
    AttachmentError,
    check_together,
    fenced,
    image_type,
    read_attachment,
    with_text_files,
)

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
HEADS = {
    "image/png": PNG,
    "image/jpeg": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 20,
    "image/gif": b"GIF89a\x01\x00\x01\x00" + b"\x00" * 20,
    "image/webp": b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\x00" * 20,
}


@pytest.mark.parametrize("kind", HEADS)
def test_an_image_is_known_by_its_first_bytes_whatever_its_name(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "holiday.txt"  # the name says text; the bytes say otherwise
    path.write_bytes(HEADS[kind])
    attached = read_attachment(path)
    assert (attached.media_type, attached.is_image, attached.data) == (kind, True, HEADS[kind])
    assert image_type(b"BM6\x00\x00") is None  # a BMP is not taken


def test_a_text_file_is_kept_terminal_safe_and_sent_as_a_fenced_block(tmp_path: Path) -> None:
    path = tmp_path / "handler.py"
    path.write_text("def handler():\n    print('\x1b[31mred\x1b[0m')\n")
    attached = read_attachment(path)
    assert attached.media_type == "text/plain" and not attached.is_image
    assert "\x1b" not in attached.text
    assert with_text_files("Review this", [attached]) == (
        f"Review this\n\nhandler.py:\n\n```py\n{attached.text.rstrip()}\n```"
    )


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"\x7fELF\x02\x01\x01\x00\x00", "is not a file byok-tui can attach"),
        ("caf\xe9".encode("latin-1"), "is not UTF-8 text or an image"),
    ],
)
def test_a_file_that_is_neither_text_nor_an_image_is_refused_naming_what_is_taken(
    tmp_path: Path, content: bytes, said: str
) -> None:
    path = tmp_path / "thing.bin"
    path.write_bytes(content)
    with pytest.raises(AttachmentError, match=said) as refused:
        read_attachment(path)
    assert "PNG, JPEG, WEBP, GIF" in refused.value.remedy


def test_a_file_too_large_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.png"
    with path.open("wb") as file:  # sparse: 3 GB on paper, nothing on disk
        file.truncate(3 * 1024**3)
    with pytest.raises(AttachmentError, match=r"huge.png is too large to attach \(3,072.0 MB"):
        read_attachment(path)
    big = tmp_path / "big.png"
    big.write_bytes(PNG + b"\x00" * MAX_IMAGE_BYTES)
    with pytest.raises(AttachmentError, match=r"at most 5\.0 MB"):
        read_attachment(big)


def test_a_folder_or_a_missing_file_is_said_plainly(tmp_path: Path) -> None:
    with pytest.raises(AttachmentError, match="is a folder"):
        read_attachment(tmp_path)
    with pytest.raises(AttachmentError, match=r"Cannot read .*: No such file"):
        read_attachment(tmp_path / "nowhere.txt")
    if os.geteuid() != 0:  # root reads everything
        locked = tmp_path / "locked.txt"
        locked.write_text("x")
        locked.chmod(0)
        with pytest.raises(AttachmentError, match="Permission denied"):
            read_attachment(locked)


def test_one_message_carries_at_most_ten_files() -> None:
    one = Attachment("a.txt", "text/plain", b"a")
    check_together([one] * MAX_FILES)
    with pytest.raises(AttachmentError, match="at most 10 files"):
        check_together([one] * (MAX_FILES + 1))


@settings(max_examples=300)
@given(
    st.one_of(st.text(), st.text(alphabet="` \n\ra")),
    st.from_regex(r"[A-Za-z0-9_. -]{1,30}", fullmatch=True),
)
def test_a_files_text_can_never_close_its_fence_early(text: str, name: str) -> None:
    lines = re.split(r"\r\n|\r|\n", fenced(Attachment(name, "text/plain", text.encode())))
    fence = re.match(r"`+", lines[2])
    assert lines[:2] == [f"{name}:", ""] and fence is not None
    assert lines[-1] == fence.group()
    # A closing fence: up to three spaces, then at least as many backticks.
    assert not any(re.match(rf" {{0,3}}{fence.group()}", line) for line in lines[3:-1])
