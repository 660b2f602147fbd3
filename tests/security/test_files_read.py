"""Files byok-tui reads at a path it is given (attachments, imports, the config and key
files) are bounded whatever `stat` says: anything but a regular file (a FIFO with no writer,
a device, an endless stream) is refused at once, and a read never takes more than its limit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from byok_tui.core.attachments import AttachmentError, read_attachment
from byok_tui.core.paths import FileReadError, read_bounded
from tests.support.cli import run_cli


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "conversations.json"
    os.mkfifo(path)
    return path


def test_read_bounded_refuses_a_fifo_and_a_device_at_once(fifo: Path) -> None:
    for path in (fifo, Path("/dev/zero")):
        with pytest.raises(FileReadError, match="not a regular file"):
            read_bounded(path, 1024)


def test_read_bounded_never_reads_past_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"x" * 5000)
    with pytest.raises(FileReadError, match="larger than"):
        read_bounded(path, 4096)
    assert read_bounded(path, 5000) == b"x" * 5000


@pytest.mark.parametrize("path", ["/dev/zero", "fifo"])
def test_attaching_a_stream_is_refused_at_once(path: str, fifo: Path) -> None:
    with pytest.raises(AttachmentError, match="not a regular file"):
        read_attachment(fifo if path == "fifo" else Path(path))


@pytest.mark.parametrize(
    "command",
    [
        ("ask", "-p", "groq", "--attach", "{}", "hi"),
        ("import", "{}"),
        ("import", "--from", "chatgpt", "{}"),
        ("import", "--from", "claude", "{}"),
    ],
    ids=["ask --attach", "import", "import chatgpt", "import claude"],
)
@pytest.mark.parametrize("kind", ["/dev/zero", "fifo"])
def test_the_shell_refuses_a_stream_and_neither_hangs_nor_fills_memory(
    command: tuple[str, ...], kind: str, fifo: Path
) -> None:
    target = str(fifo) if kind == "fifo" else kind
    env = {"GROQ_API_KEY": "gsk_" + "A" * 52}
    result = run_cli(*(target if part == "{}" else part for part in command), env=env, timeout=30)
    assert result.returncode in (1, 2), result.stderr
    assert "not a regular file" in result.stderr
    assert "MemoryError" not in result.stderr and "crashed" not in result.stderr
