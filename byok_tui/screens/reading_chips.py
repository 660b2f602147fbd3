"""The chat column's attachment chips, which read and check each file to attach themselves: in
a worker thread, through the data service. A file refused is said why; text pasted that only
looked like a path is handed back to be typed after all. While files are being read a
message sent waits for them (the column holds it until `AllRead`), so that a path pasted just
before Enter goes with the message it was pasted into.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual import work
from textual.message import Message

from byok_tui.app_services.app_data import AppData
from byok_tui.core.attachments import NoSuchFile
from byok_tui.core.errors import ByokError
from byok_tui.screens.chat_messages import AttachmentRead, AttachmentRefused
from byok_tui.widgets.attachment_chips import AttachmentChips


class ReadingChips(AttachmentChips):
    @dataclass
    class PastedBack(Message):
        """Pasted text that named no file: it is typed after all, nothing lost."""

        text: str

    class AllRead(Message):
        """No file is being read any more: a message held for them may go."""

    def __init__(self, data: AppData) -> None:
        super().__init__()
        self.data = data
        self.being_read: list[Path] = []  # files asked for whose read has not ended

    @property
    def reading(self) -> int:
        """How many files are being read."""
        return len(self.being_read)

    def attach(self, path: Path, pasted: str | None = None) -> None:
        """Read and check a file, in a thread; it becomes a chip. `pasted`: the text it came
        from, typed after all if it names no file."""
        self.being_read.append(path)
        self.post_message(self.Changed())  # it belongs to the draft from now on
        self._read(path, pasted)

    @work(thread=True, group="attach", exit_on_error=False)
    def _read(self, path: Path, pasted: str | None) -> None:
        try:
            self.post_message(AttachmentRead(self.data.read_attachment(path), path))
        except ByokError as error:
            self.post_message(AttachmentRefused(error, path, pasted))
        except Exception as error:  # never leave a message waiting for this file
            said = f"could not read {path.name}: {type(error).__name__}"
            self.post_message(AttachmentRefused(ByokError(said), path, pasted))

    def on_attachment_read(self, message: AttachmentRead) -> None:
        self.being_read.remove(message.path)
        self.add(message.attachment)
        self._one_read()

    def on_attachment_refused(self, message: AttachmentRefused) -> None:
        if message.pasted is not None:
            self.post_message(self.PastedBack(message.pasted))
        if message.pasted is None or not isinstance(message.error, NoSuchFile):
            # (else it was text that only looked like a path)
            self.notify(f"Not attached: {message.error.one_line()}", severity="error", timeout=8)
        self.being_read.remove(message.path)
        self.post_message(self.Changed())
        self._one_read()

    def _one_read(self) -> None:
        if not self.reading:
            self.post_message(self.AllRead())
