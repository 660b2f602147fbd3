"""The files attached to the message being written, as chips above the composer: each says
its name and size, and a click on it (or Enter, once focused) takes it off. Hidden while
there are none."""

from __future__ import annotations

from rich.text import Text
from textual.containers import Container
from textual.message import Message
from textual.widgets import Button

from byok_tui.core.attachments import Attachment


class AttachmentChips(Container):
    # Three chips a row, as many rows as needed (a row of them was cut at the composer's
    # width: the third chip went unseen); the ✕ comes first, so a name cut short keeps it.
    DEFAULT_CSS = """
    AttachmentChips {
        height: auto; display: none; padding: 0 1;
        layout: grid; grid-size: 3; grid-gutter: 0 1; grid-rows: 1;
    }
    AttachmentChips.-some { display: block; }
    AttachmentChips > Button { width: 100%; }
    """

    class Changed(Message):
        """A file was attached or taken off (or all went with a message sent); in the chat
        column's chips, also a file's read began or was refused (what is being read is in the
        draft too)."""

    def __init__(self) -> None:
        super().__init__(id="attachments")
        self.attachments: list[Attachment] = []

    def add(self, attachment: Attachment) -> None:
        self.attachments.append(attachment)
        self._show()

    def take(self) -> list[Attachment]:
        """The files for the message being sent; the chips go."""
        taken, self.attachments = self.attachments, []
        self._show()
        return taken

    def give_back(self, attachments: list[Attachment]) -> None:
        """A message that was not sent: its files are attached again."""
        self.attachments = attachments + self.attachments
        self._show()

    def _show(self) -> None:
        self.remove_children()
        self.mount_all(
            Button(Text(f"✕ 📎 {a.label}"), name=str(number), compact=True, classes="chip")
            for number, a in enumerate(self.attachments)
        )
        self.set_class(bool(self.attachments), "-some")
        self.post_message(self.Changed())

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.name is not None and event.button.has_class("chip"):
            event.stop()
            del self.attachments[int(event.button.name)]
            self._show()
