"""The message composer: a multi-line text area where Enter sends.

A new line is ctrl+j, shift+enter or alt+enter (terminals differ in which they can report).
It can hold a stored message to edit; the draft it held before comes back if the edit is
cancelled. `draft` is what an exit must not lose: the text being written, with an edit's
changes after the draft from before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from byok_tui.core.bindings import COMPOSER_KEYS

_NEWLINE_KEYS = frozenset(next(k for k in COMPOSER_KEYS if k.action == "newline").keys.split(","))


COMPOSER_TITLE = "Message · Enter sends · ctrl+j new line"
EDITING_TITLE = "Editing a message · Enter sends it as an alternative · Esc cancels"


class Composer(TextArea):
    DEFAULT_CSS = """
    Composer { height: 6; border: round $accent 40%; }
    Composer:focus { border: round $accent; }
    """

    @dataclass
    class Submitted(Message):
        text: str

    @dataclass
    class PathPasted(Message):
        """What was pasted (or dropped) reads as one file's path: to attach, if it is one;
        else it is typed after all (`text`)."""

        path: Path
        text: str

    def __init__(self) -> None:
        super().__init__(
            id="composer", soft_wrap=True, tab_behavior="focus", show_line_numbers=False
        )
        self.border_title = COMPOSER_TITLE
        self.editing: int | None = None  # the stored message held to edit
        self._draft_before_edit = ""
        self._edited_text = ""  # the stored text of the message held to edit

    def begin_edit(self, message_id: int, text: str) -> None:
        """Hold the stored message `message_id` to edit: sent, it makes an alternative."""
        if self.editing is None:
            self._draft_before_edit = self.text  # given back if the edit is cancelled
        self.editing = message_id
        self._edited_text = text
        self.text = text
        self.border_title = EDITING_TITLE
        self.focus()

    @property
    def draft(self) -> str:
        """What the composer holds that is not stored anywhere else: its text, or during an
        edit the draft from before it followed by the edit's changes (if any)."""
        if self.editing is None:
            return self.text
        changed = self.text if self.text != self._edited_text else ""
        return "\n\n".join(text for text in (self._draft_before_edit, changed) if text)

    def cancel_edit(self) -> bool:
        """Leave the edit; the draft from before it is back. False: there was none."""
        if self.editing is None:
            return False
        self.end_edit()
        self.text = self._draft_before_edit
        return True

    def end_edit(self) -> int | None:
        """Leave the edit (its text is being sent): the message it edited, if any."""
        editing, self.editing = self.editing, None
        self.border_title = COMPOSER_TITLE
        return editing

    async def _on_paste(self, event: events.Paste) -> None:
        from byok_tui.core.attachments import pasted_path  # not before the first frame: ~0.7 ms

        path = pasted_path(event.text)
        if path is None:
            await super()._on_paste(event)
            # Else Textual calls TextArea's own handler as well (it dispatches to each class's
            # handler in turn), and the text lands twice.
            event.prevent_default()
            return
        event.stop()
        event.prevent_default()
        self.post_message(self.PathPasted(path, event.text))

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            text = self.text
            if text.strip():
                self.post_message(self.Submitted(text))
                self.clear()
            return
        if event.key in _NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        await super()._on_key(event)
