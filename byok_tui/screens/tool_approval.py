"""The dialog that asks before a tool runs: the server, the tool, what the server declares
of it, which of the user's keys its config gives it, and the call's full arguments
(scrollable, drawn as plain text). Allow once, always allow this tool for this bot, or deny;
Escape denies. What a server declares (read-only) is shown, never taken as approval.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Static

from byok_tui.app_services.tool_box import Decision, ToolAsk
from byok_tui.core.bindings import TOOL_APPROVAL_KEYS, textual_bindings
from byok_tui.screens.dialogs import Dialog


def declared(ask: ToolAsk) -> str:
    """What the server says of the tool, in words."""
    said = []
    if ask.read_only:
        said.append("read-only")
    if ask.destructive:
        said.append("may change or delete things")
    if not said:
        return "The server declares nothing about what it does."
    return f"The server declares it {' and '.join(said)} (its word, not a promise)."


class ToolApprovalDialog(Dialog[Decision]):
    DEFAULT_CSS = """
    ToolApprovalDialog { align: center middle; }
    ToolApprovalDialog > Vertical { width: 90%; max-width: 100; height: auto; max-height: 90%;
                                    padding: 1 2; background: $panel; border: round $warning; }
    ToolApprovalDialog .given { color: $warning; }
    ToolApprovalDialog VerticalScroll { height: auto; max-height: 16; margin-top: 1;
                                        background: $boost; padding: 0 1; }
    ToolApprovalDialog Horizontal { height: auto; margin-top: 1; }
    ToolApprovalDialog Button { margin-right: 2; }
    """
    BINDINGS = textual_bindings(TOOL_APPROVAL_KEYS)
    AUTO_FOCUS = "#deny"  # an Enter pressed at once runs nothing

    def __init__(self, ask: ToolAsk, bot_name: str) -> None:
        super().__init__()
        self._ask, self._bot_name = ask, bot_name

    def compose(self) -> ComposeResult:
        ask = self._ask
        with Vertical():
            yield Static(
                Text.assemble(
                    "The model asks to run ",
                    (ask.tool, "bold"),
                    " of the MCP server ",
                    (ask.server, "bold"),
                    ".",
                )
            )
            yield Static(Text(declared(ask)))
            if ask.keys_given:
                keys = ", ".join(ask.keys_given)
                given = f"Its config gives it your key of {keys}."
                yield Static(Text(given), classes="given")
            with VerticalScroll(id="arguments"):
                yield Static(Text(ask.arguments), id="arguments-text")
            with Horizontal():
                yield Button("Allow once (a)", variant="primary", id="once")
                yield Button(f"Always for {self._bot_name} (l)", id="always")
                yield Button("Deny (d, Esc)", variant="error", id="deny")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_decide(event.button.id or "deny")

    def action_decide(self, decision: str) -> None:
        if decision == "once":
            self.answer("once")
        elif decision == "always":
            self.answer("always")
        else:
            self.answer("deny")
