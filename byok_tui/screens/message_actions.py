"""The chat screen's actions on messages: copy, edit, answer again, continue, switch between
alternatives, attach a file, and write the draft in an external editor.

What changes a conversation is done by the conversation column (screens/chat_column.py);
storage is reached only through the data service, in a worker. Whatever is copied is
redacted first: a key pasted into a conversation never reaches the clipboard.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import SuspendNotSupported

from byok_tui.core.errors import ByokError
from byok_tui.core.redaction import redact_keys
from byok_tui.screens.dialogs import TextDialog
from byok_tui.screens.reading_chips import ReadingChips
from byok_tui.widgets.composer import Composer
from byok_tui.widgets.message_views import ContinueWanted, RegenerateWanted, ReplyView, UserMessage
from byok_tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from byok_tui.screens.chat_host import ChatHost

BUSY = "A reply is on its way: wait, or press Escape to stop it."


class MessageActions:
    def __init__(self, screen: ChatHost) -> None:
        self._screen = screen

    # Copying -------------------------------------------------------------------------------

    def copy_message(self) -> None:
        """Copy the focused message, else the last one."""
        text = self._screen.query_one(Transcript).text_to_copy()
        if not text:
            self._screen.notify("No message to copy yet.")
            return
        self.copy(text, "the message")

    def copy(self, text: str, what: str) -> None:
        """Put `text` on the clipboard with the terminal's clipboard sequence (OSC 52, which
        reaches the local clipboard over SSH too)."""
        # A key pasted into a conversation is not copied on to wherever the clipboard goes:
        # the clipboard is redacted like every document that leaves byok-tui.
        copied = redact_keys(text)
        self._screen.app.copy_to_clipboard(copied)
        if copied != text:
            self._screen.notify(f"Copied {what}; your key in it was replaced by [REDACTED].")
        else:
            self._screen.notify(f"Copied {what} to the clipboard.")

    # Editing, answering again, continuing -------------------------------------------------

    def edit_last(self) -> None:
        sent = [m for m in self._screen.query(UserMessage) if m.message_id is not None]
        if not sent:
            self._screen.notify("No message of yours to edit yet.")
            return
        composer = self._screen.query_one(Composer)
        composer.begin_edit(sent[-1].message_id or 0, sent[-1].message_text)

    def regenerate_focused(self) -> None:
        """Answer the focused reply again, else the last one."""
        screen = self._screen
        focused = screen.focused
        replies = [r for r in screen.query(ReplyView) if r.message_id is not None]
        if isinstance(focused, ReplyView) and focused.message_id is not None:
            screen.post_message(RegenerateWanted(focused.message_id))
        elif replies:
            screen.post_message(RegenerateWanted(replies[-1].message_id or 0))
        else:
            screen.notify("No reply to answer again yet.")

    def regenerate(self, reply_id: int) -> None:
        if not self._screen.column.regenerate(reply_id):
            self._screen.notify(BUSY)
            return
        # Asked from a focused reply: the new answer has the focus once it is shown, so that
        # ←/→ browse the answers at once.
        self._screen.focus_new_answer = isinstance(self._screen.focused, ReplyView)

    def continue_last(self) -> None:
        replies = self._screen.query(ReplyView)
        last = replies.last() if replies else None
        if last is None or last.message_id is None or not last.has_class("partial"):
            self._screen.notify("The last reply is not cut short: there is nothing to continue.")
            return
        self._screen.post_message(ContinueWanted(last.message_id))

    def continue_reply(self, reply_id: int) -> None:
        if not self._screen.column.continue_reply(reply_id):
            self._screen.notify(BUSY)

    def switch_alternative(self, message_id: int, step: int) -> None:
        """Show the alternative `step` away (-1 before, +1 after) of a message, and the branch
        that follows it."""
        screen = self._screen

        def switch() -> None:
            try:
                chosen = screen.data.switch_alternative(message_id, step)
            except ByokError as error:
                screen.app.call_from_thread(screen.notify, error.one_line(), severity="error")
                return
            screen.app.call_from_thread(self._show_alternative, chosen, step)

        screen.run_worker(switch, thread=True, exclusive=True, group="alternative")

    def _show_alternative(self, chosen: int | None, step: int) -> None:
        screen = self._screen
        if chosen is None:
            screen.notify(f"No alternative {'before' if step < 0 else 'after'} this one.")
        elif screen.state is not None and screen.state.conversation is not None:
            screen.show_chat(screen.state.bot.id, screen.state.conversation.id, reveal=chosen)

    # The draft -----------------------------------------------------------------------------

    def attach_file(self) -> None:
        """Ask for a file's path; it is attached to the next message."""
        screen = self._screen

        def chosen(path: str | None) -> None:
            if path and path.strip():
                screen.query_one(ReadingChips).attach(Path(path.strip()))
            screen.query_one(Composer).focus()

        screen.app.push_screen(TextDialog("Attach a file (its path)", ""), chosen)

    def edit_in_editor(self) -> None:
        """Write the message in $VISUAL or $EDITOR; the editor gets no provider keys."""
        from byok_tui.core.external_editor import edit_text

        screen = self._screen
        composer = screen.query_one(Composer)
        try:
            with screen.app.suspend():
                edited = edit_text(composer.text, capture=False)
        except SuspendNotSupported:  # headless: no terminal to hand over, just run it
            edited = edit_text(composer.text, capture=True)
        if edited.text is not None:
            composer.text = edited.text
        elif edited.problem:
            screen.notify(edited.problem, severity="warning")
        composer.focus()
