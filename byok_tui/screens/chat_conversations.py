"""The chat screen's conversation actions: search, rename, delete, export as Markdown, and the
sidebar's older conversations.

Storage is reached only through the data service; reads and the export run in workers, and
what they find comes back on the event loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from byok_tui.core.errors import ByokError
from byok_tui.core.records import Conversation, SearchHit
from byok_tui.screens.chat_messages import OlderConversationsRead
from byok_tui.screens.dialogs import ConfirmDialog, TextDialog
from byok_tui.widgets.sidebar import Sidebar

if TYPE_CHECKING:
    from byok_tui.screens.chat_host import ChatHost


class ConversationActions:
    def __init__(self, screen: ChatHost) -> None:
        self._screen = screen
        self._searched = ""  # the last search, offered again by ctrl+f

    def _open_one(self) -> Conversation | None:
        """The conversation on screen; None (and the user is told) when there is none yet."""
        state = self._screen.state
        if state is not None and state.conversation is not None:
            return state.conversation
        self._screen.notify("No conversation yet: send a message to start one.")
        return None

    def search(self) -> None:
        """Search every conversation; the one chosen opens at the message found."""
        from byok_tui.screens.search import SearchScreen

        screen = self._screen
        if isinstance(screen.app.screen, SearchScreen):
            return
        search = SearchScreen(screen.data, self._searched)

        def chosen(hit: SearchHit | None) -> None:
            self._searched = search.last_typed
            if hit is not None:
                screen.show_chat(hit.bot_id, hit.conversation_id, reveal=hit.message_id)

        screen.app.push_screen(search, chosen)

    def rename(self) -> None:
        screen = self._screen
        if (conversation := self._open_one()) is None:
            return

        def renamed(title: str | None) -> None:
            if title:
                screen.data.rename_conversation(conversation.id, title)
                screen.read_again()

        screen.app.push_screen(TextDialog("Rename conversation", conversation.title), renamed)

    def delete_open(self) -> None:
        if (conversation := self._open_one()) is not None:
            self.delete(conversation)

    def delete(self, conversation: Conversation) -> None:
        """Ask, then delete `conversation`; when it is on screen, a new one takes its place."""
        screen = self._screen
        on_screen = screen.state is not None and screen.state.conversation == conversation
        if screen.column.busy and on_screen:
            screen.notify("A reply is on its way: stop it (Escape) before deleting the chat.")
            return

        def confirmed(yes: bool | None) -> None:
            if yes and screen.state is not None:
                screen.data.delete_conversation(conversation.id)
                if screen.state.conversation == conversation:
                    screen.show_chat(screen.state.bot.id, 0)
                else:
                    screen.read_again()

        screen.app.push_screen(
            ConfirmDialog(f"Delete the conversation “{conversation.title}” and its messages?"),
            confirmed,
        )

    def export_markdown(self) -> None:
        screen = self._screen
        if screen.state is None or screen.state.conversation is None:
            screen.notify("No conversation to export yet: send a message first.")
            return
        conversation_id = screen.state.conversation.id

        def export() -> None:
            try:
                path = screen.data.exports.export_markdown(conversation_id)
            except ByokError as error:
                screen.app.call_from_thread(
                    screen.notify, f"Export failed: {error.one_line()}", severity="error"
                )
                return
            screen.app.call_from_thread(
                screen.notify, f"Exported as Markdown (no keys included) to {path}", timeout=10
            )

        screen.run_worker(export, thread=True, exclusive=True, group="export-markdown")

    def read_older(self, last: Conversation) -> None:
        """Read the bot's next page of conversations, those older than `last`."""
        screen = self._screen
        if screen.state is None:
            return
        bot_id = screen.state.bot.id

        def read() -> None:
            try:
                older = screen.data.older_conversations(bot_id, last)
            except ByokError as error:
                screen.post_message(OlderConversationsRead(bot_id, [], error))
                return
            screen.post_message(OlderConversationsRead(bot_id, older))

        screen.run_worker(read, thread=True, group="older-conversations")

    def older_read(self, message: OlderConversationsRead) -> None:
        screen = self._screen
        if message.error is not None:
            screen.notify(message.error.one_line(), severity="error", timeout=15)
        state = screen.state
        if state is None or state.bot.id != message.bot_id:
            return  # another bot is shown now
        state.conversations += message.conversations
        state.older_conversations -= len(message.conversations)
        screen.query_one(Sidebar).add_older(message.conversations, state.older_conversations)
