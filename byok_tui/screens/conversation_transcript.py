"""The open conversation's transcript, read a page at a time: earlier messages as the reader
scrolls up, the newest again after a jump far back, and a stored message shown on request
(read first if need be). The reads run in worker threads through the data service and come
back as messages; only the handlers touch the transcript. Never reads a whole conversation.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import work
from textual.message import Message

from byok_tui.app_services.app_data import AppData
from byok_tui.core.errors import ByokError
from byok_tui.core.records import Conversation, TranscriptPage
from byok_tui.screens.chat_messages import EarlierRead, NewestRead
from byok_tui.widgets.transcript import Transcript


class ConversationTranscript(Transcript):
    class NewestShown(Message):
        """The newest messages are on screen again (or could not be read, which was said)."""

    def __init__(
        self,
        data: AppData,
        open_conversation: Callable[[], Conversation | None],
        *,
        id: str | None = None,
    ) -> None:
        """`open_conversation`: the conversation open now (None: a new one, not stored yet)."""
        super().__init__(id=id)
        self.data = data
        self._open_conversation = open_conversation

    def show(self, message_id: int) -> None:
        """Show a stored message of the open conversation, marked (read first if need be)."""
        if self.reveal(message_id) == "absent":
            self.notify("That message is no longer in this conversation.", severity="warning")

    # Earlier messages, read as the reader scrolls up ----------------------------------------

    def on_transcript_earlier_wanted(self, message: Transcript.EarlierWanted) -> None:
        message.stop()
        if (conversation := self._open_conversation()) is not None:
            self._read_earlier(conversation.id, message)

    @work(thread=True, group="earlier", exit_on_error=False)
    def _read_earlier(self, conversation_id: int, wanted: Transcript.EarlierWanted) -> None:
        try:
            page = self.data.earlier_page(conversation_id, wanted.before, wanted.down_to)
        except ByokError as error:
            self.post_message(EarlierRead(None, wanted.before, wanted.reveal, error))
            return
        self.post_message(EarlierRead(page, wanted.before, wanted.reveal))

    async def on_earlier_read(self, message: EarlierRead) -> None:
        if message.page is None:
            await self.show_earlier(TranscriptPage.empty(earlier=True), message.before)
            error = message.error.one_line() if message.error else "unknown error"
            self.notify(f"Earlier messages could not be read: {error}", severity="error")
            return
        await self.show_earlier(message.page, message.before)
        if message.reveal is not None:
            self.show(message.reveal)

    # The newest messages, again ---------------------------------------------------------------

    def on_transcript_newest_wanted(self, message: Transcript.NewestWanted) -> None:
        message.stop()
        self.show_newest()

    def show_newest(self) -> None:
        """Read the newest messages again and show them; NewestShown says when they are."""
        if (conversation := self._open_conversation()) is not None:
            self._read_newest(conversation.id)
        else:
            self.post_message(self.NewestShown())

    @work(thread=True, exclusive=True, group="newest", exit_on_error=False)
    def _read_newest(self, conversation_id: int) -> None:
        try:
            self.post_message(NewestRead(self.data.newest_page(conversation_id)))
        except ByokError as error:
            self.post_message(NewestRead(None, error))

    def on_newest_read(self, message: NewestRead) -> None:
        if message.page is not None:
            self.show_page(message.page)
        else:
            error = message.error.one_line() if message.error else "unknown error"
            self.notify(f"The newest messages could not be read: {error}", severity="error")
        self.post_message(self.NewestShown())
