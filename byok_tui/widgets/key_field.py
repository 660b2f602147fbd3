"""A masked key field with a reveal toggle. It shows and reports its value, trimmed as it will
be saved (a pasted key's surrounding spaces and invisible characters go at once); saving is
the screen's business (through the background writer), so this widget does no I/O."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button, Input

from byok_tui.core.key_text import KeyCharacterError, check_key, normalize_key


class KeyField(Horizontal):
    DEFAULT_CSS = """
    KeyField { height: auto; }
    KeyField > Input { width: 1fr; }
    KeyField > Button { min-width: 8; width: 8; }
    """

    @dataclass
    class Changed(Message):
        field: KeyField
        value: str
        problem: str | None = None  # why it cannot be saved (a character no key has), or None

        @property
        def control(self) -> KeyField:
            return self.field

    def __init__(self, *, placeholder: str, id: str | None = None, name: str | None = None) -> None:
        super().__init__(id=id, name=name)
        self._placeholder = placeholder

    def compose(self) -> ComposeResult:
        yield Input(placeholder=self._placeholder, password=True, classes="key-input")
        yield Button("show", classes="reveal", compact=True)

    @property
    def value(self) -> str:
        return self.query_one(Input).value

    def set_value(self, value: str) -> None:
        """Show a stored value without reporting it as a change."""
        field = self.query_one(Input)
        with field.prevent(Input.Changed):
            field.value = value

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        value = normalize_key(event.value)
        if value != event.value:
            self.set_value(value)  # shown as it is saved
            event.input.cursor_position = len(value)
        try:
            check_key(value)
        except KeyCharacterError as error:
            self.post_message(self.Changed(self, value, problem=error.message))
            return
        self.post_message(self.Changed(self, value))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        field = self.query_one(Input)
        field.password = not field.password
        event.button.label = "show" if field.password else "hide"
