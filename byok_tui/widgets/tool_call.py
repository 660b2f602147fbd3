"""A tool call in the transcript: one line saying what ran and what came back, collapsed;
Enter, Space or a click shows the call's arguments and its result.

Both are outside text (a model wrote the arguments, a server the result): they arrive
sanitised and redacted, and are drawn as plain text, never parsed as markup.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.events import Click
from textual.widgets import Static

from byok_tui.chat.outgoing import DENIED
from byok_tui.core.bindings import TOOL_CALL_KEYS, textual_bindings

SHOWN_CHARACTERS = 20_000  # of a result, drawn when expanded (the whole is kept and sent)


def tool_call_summary(name: str, result: str, *, error: bool) -> str:
    """The collapsed line: the tool, and what became of the call."""
    if error and result == DENIED:
        return f"Tool {name}: not allowed (the model was told)"
    if error:
        first = result.strip().splitlines()[0] if result.strip() else "no reason given"
        return f"Tool {name}: failed: {first[:120]}"
    return f"Tool {name}: {len(result):,} characters back"


class ToolCallView(Vertical, can_focus=True):
    DEFAULT_CSS = """
    ToolCallView { height: auto; margin: 0 1 1 1; padding: 0 1; background: $boost; }
    ToolCallView:focus { background: $accent 20%; }
    ToolCallView > .summary { color: $text-muted; }
    ToolCallView > .details { display: none; margin-top: 1; }
    ToolCallView.-expanded > .details { display: block; }
    """
    BINDINGS = textual_bindings(TOOL_CALL_KEYS)

    def __init__(self, name: str, arguments: str, result: str, *, error: bool) -> None:
        super().__init__()
        self._summary = tool_call_summary(name, result, error=error)
        self._arguments, self._result = arguments, result

    def compose(self) -> ComposeResult:
        yield Static(Text(f"▸ {self._summary}"), classes="summary")
        result = self._result
        if len(result) > SHOWN_CHARACTERS:
            result = f"{result[:SHOWN_CHARACTERS]}\n… ({len(self._result):,} characters in all)"
        details = Text.assemble(
            ("Arguments\n", "bold"), self._arguments, "\n\n", ("Result\n", "bold"), result
        )
        yield Static(details, classes="details")

    @property
    def expanded(self) -> bool:
        return self.has_class("-expanded")

    def action_show_or_hide(self) -> None:
        self.toggle_class("-expanded")
        marker = "▾" if self.expanded else "▸"
        self.query_one(".summary", Static).update(Text(f"{marker} {self._summary}"))

    def on_click(self, event: Click) -> None:
        event.stop()
        self.focus()
        self.action_show_or_hide()
