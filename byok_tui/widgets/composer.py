"""The message composer: a multi-line text area where Enter sends.

A new line is ctrl+j, shift+enter or alt+enter (terminals differ in which they can report).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from byok_tui.attachments import pasted_path
from byok_tui.bindings import COMPOSER_KEYS

_NEWLINE_KEYS = frozenset(next(k for k in COMPOSER_KEYS if k.action == "newline").keys.split(","))


COMPOSER_TITLE = "Message · Enter sends · ctrl+j new line"


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

    async def _on_paste(self, event: events.Paste) -> None:
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
