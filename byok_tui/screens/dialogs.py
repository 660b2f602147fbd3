"""Small modal dialogs: ask for a line of text, or confirm something irreversible.

Their text may hold outside text (a conversation's title), so it is never parsed as markup.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

AnswerType = TypeVar("AnswerType")


class Dialog(ModalScreen[AnswerType]):
    """Answers once: an Enter or a click queued behind the first answer (pressed twice
    quickly) would set Textual's answer again (InvalidStateError) and run the action twice."""

    _answered = False

    def answer(self, result: AnswerType) -> None:
        if not self._answered:
            self._answered = True
            self.dismiss(result)


class TextDialog(Dialog[str | None]):
    DEFAULT_CSS = """
    TextDialog { align: center middle; }
    TextDialog > Vertical { width: 60; height: auto; padding: 1 2; background: $panel;
                            border: round $accent; }
    TextDialog #problem { color: $error; display: none; }
    TextDialog #problem.shown { display: block; }
    """
    BINDINGS = [Binding("escape", "dismiss_none", "Cancel")]

    def __init__(
        self, title: str, value: str = "", check: Callable[[str], str | None] | None = None
    ) -> None:
        """`check`: why a line cannot be the answer (said under the field, the dialog kept
        open so that nothing typed is lost), or None when it can."""
        super().__init__()
        self._title, self._value, self._check = title, value, check

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self._title, markup=False)
            yield Input(self._value)
            yield Static("", id="problem")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        typed = event.value.strip()
        problem = self._check(typed) if typed and self._check is not None else None
        shown = self.query_one("#problem", Static)
        shown.update(Text(problem or ""))
        shown.set_class(problem is not None, "shown")
        if problem is None:
            self.answer(typed or None)

    def action_dismiss_none(self) -> None:
        self.answer(None)


class ConfirmDialog(Dialog[bool]):
    DEFAULT_CSS = """
    ConfirmDialog { align: center middle; }
    ConfirmDialog > Vertical { width: 60; height: auto; padding: 1 2; background: $panel;
                               border: round $error; }
    ConfirmDialog Label { width: 100%; }  /* wraps: a question is never cut */
    ConfirmDialog Horizontal { height: auto; margin-top: 1; }
    ConfirmDialog Button { margin-right: 2; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, question: str, yes: str = "Delete", no: str = "Cancel") -> None:
        super().__init__()
        self._question = question
        self._yes, self._no = yes, no

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self._question, markup=False)
            with Horizontal():
                yield Button(self._yes, variant="error", id="yes")
                yield Button(self._no, id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.answer(event.button.id == "yes")

    def action_cancel(self) -> None:
        self.answer(False)
