"""The conversation column's state and everything but sending: what the chat screen tells it
is open (`opening`, `opened`), reading ahead of the next send, the drafts and files given back,
the message echoed once its request has left, the reply's notices, and the activity line.

`ChatColumn` (chat_column.py) is this column with the send path and the handlers of a reply's
end; its `_tick_activity` also sends a retry or a fallback whose countdown is over.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.timer import Timer
from textual.worker import Worker, WorkerState

from byok_tui.app_services.app_data import AppData
from byok_tui.chat.send_schedule import SendSchedule
from byok_tui.core.attachments import Attachment
from byok_tui.core.records import Conversation, Draft, TranscriptPage
from byok_tui.screens.chat_composer import ChatComposer
from byok_tui.screens.chat_messages import HistoryNotice, KeyNotice, ReplyBilled, ReplyDone
from byok_tui.screens.conversation_transcript import ConversationTranscript
from byok_tui.screens.reading_chips import ReadingChips
from byok_tui.widgets.activity_line import ActivityLine
from byok_tui.widgets.attachment_chips import AttachmentChips
from byok_tui.widgets.composer import Composer
from byok_tui.widgets.reply_stream import ReplyStream
from byok_tui.widgets.transcript import Transcript

ECHO_GRACE = 0.03  # longest a sent message waits for its request to be on the wire
# Longest the first drawing of a conversation just opened waits for the request of a message
# sent while it opened (at start, the page's replies rendered took 100-300 ms of the event
# loop between the send's steps, and the request left that much later).
OPENED_PAGE_GRACE = 0.5
# A long conversation's history is read ahead of its next send this long after it opened:
# its ~40 ms of Python (100,000 messages) read while the page was laid out and scrolled made
# the opening 50-100 ms longer (benchmark 3 alone: 1.44x with it, 1.18x without). A send
# before then reads the history itself.
READ_AHEAD_AFTER = 0.3


@dataclass(frozen=True)
class Branch:
    """What the next send replaces, if anything: a user message edited, or a reply asked
    again; or the reply it continues."""

    edit_of: int | None = None
    regenerate: int | None = None
    continue_of: int | None = None

    @property
    def replaced(self) -> int | None:
        return self.edit_of if self.edit_of is not None else self.regenerate


# A reply whose words came this recently (seconds) is arriving: its words are what moves on
# screen, and the activity line's dots and the composer's cursor hold still (together ~50
# frames of their own in a ten-second reply). Once they stop, the dots say it is awaited.
WORDS_ARRIVING = 1.0


class ColumnBase(Vertical):
    """The column's state, and what it does but send."""

    def __init__(
        self,
        data: AppData,
        *,
        clock: Callable[[], float] = time.monotonic,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.data = data
        self._clock = clock
        self._bot_id: int | None = None  # None until a bot has been opened
        self._conversation: Conversation | None = None  # None: the next message starts one
        self._stream = ReplyStream(self)  # the reply in progress (or the last one)
        self._unechoed: str | None = None  # sent text not drawn in the transcript yet
        self._echoed_files: list[Attachment] = []  # and the files it carries
        self._frames_held: contextlib.ExitStack | None = None  # no frame drawn meanwhile
        self._page_waits = False  # the page just opened waits for a request to leave
        self._read_ahead_timer: Timer | None = None
        self._send: Worker[None] | None = None
        self._schedule = SendSchedule()  # retries and fallbacks counting down
        # Set while what is shown is what the user asked for; cleared while a conversation
        # (or the bot's config) is being read: a message sent then waits.
        self._ready = asyncio.Event()
        self._unsent_kept = False  # a message waiting for its conversation is kept aside
        # Clear while a message sent waits for its request to be on the wire (or to fail).
        self._request_left = asyncio.Event()
        self._request_left.set()
        self._billed: float | None = None  # what the reply in progress cost, once it ended
        self._words_at = -WORDS_ARRIVING  # when the reply's last words arrived (the clock's)
        self._blink_held = False  # the composer's blink, stopped while words arrive
        self._branch = Branch()  # what the next send replaces (an edit, a regeneration)
        self._branched = False  # the send in progress made a new branch
        self._outgoing: list[Attachment] = []  # the files the message being sent carries
        self._attached_paths: list[str] = []  # where the files attached now were read from
        self._estimate_line = ""  # what sending the composer's text would cost
        # Sent while files were being read: each waits for them, in order, so that a path
        # pasted just before Enter goes with the message it was pasted into.
        self._sends_waiting_for_files: list[Composer.Submitted] = []

    def compose(self) -> ComposeResult:
        yield ConversationTranscript(self.data, lambda: self._conversation, id="transcript")
        yield ActivityLine(id="activity")
        yield ReadingChips(self.data)
        yield ChatComposer(self.data, self._sending_to, self._files_attached)

    @property
    def is_open(self) -> bool:
        """What is shown is what was asked for: no bot or conversation is being read."""
        return self._ready.is_set()

    def opening(self) -> None:
        """A bot or conversation is being read: a message sent now waits for it."""
        self._ready.clear()
        self._no_read_ahead()

    def opened(
        self, bot_id: int, conversation: Conversation | None, page: TranscriptPage | None
    ) -> None:
        """What is open now; `page` (its newest messages) when the transcript is to show it."""
        self._bot_id, self._conversation = bot_id, conversation
        if page is not None:
            self.query_one(Transcript).show_page(page)
            # Only for a conversation longer than a page (a short one is read at the send in
            # a millisecond), and once the opening has settled (READ_AHEAD_AFTER).
            if conversation is not None and page.earlier:
                self._read_ahead_soon(bot_id, conversation.id)
        self._ready.set()
        self._echo()  # a message sent while this conversation opened, under its history
        if page is not None and not self._request_left.is_set():
            # That message's request goes first: the page (and the message under it) is
            # drawn once it has left (_echo) or OPENED_PAGE_GRACE has passed.
            self._hold_frames()
            self._page_waits = True
            self.set_timer(OPENED_PAGE_GRACE, self._release_frames)
        self.draft_goes_elsewhere()

    def draft_goes_elsewhere(self) -> None:
        """What a message would go to changed (a bot or conversation opened, the bot's
        settings saved): the draft's estimate is worked out again, for it."""
        composer = self.query_one(ChatComposer)
        if composer.text.strip():
            composer.estimate_soon()

    def _read_ahead_soon(self, bot_id: int, conversation_id: int) -> None:
        """Read the conversation's history ahead of its next send, READ_AHEAD_AFTER from now
        (instead of any read still to come for another)."""
        self._no_read_ahead()
        read = functools.partial(self._read_ahead, bot_id, conversation_id)
        self._read_ahead_timer = self.set_timer(READ_AHEAD_AFTER, read)

    def _no_read_ahead(self) -> None:
        """A read ahead still to come is not wanted (another conversation is opening)."""
        if self._read_ahead_timer is not None:
            self._read_ahead_timer.stop()
            self._read_ahead_timer = None

    @work(thread=True, exclusive=True, group="read-ahead", exit_on_error=False)
    def _read_ahead(self, bot_id: int, conversation_id: int) -> None:
        """What the next send carries, read ahead of it: a send in a conversation longer
        than the model's context then reads only what was added since (~30 ms less)."""
        self.data.read_ahead(bot_id, conversation_id)

    def _sending_to(self) -> tuple[int | None, int | None]:
        """The bot and conversation a message would go to now (None: none; a new one)."""
        return self._bot_id, self._conversation.id if self._conversation else None

    def open_failed(self) -> None:
        """The read failed (the error was shown): a message waiting is told why it waits no more."""
        self._ready.set()

    def new_conversation(self) -> None:
        self._conversation = None
        self.query_one(Transcript).show_page(TranscriptPage.empty())
        self.draft_goes_elsewhere()

    def on_conversation_transcript_newest_shown(
        self, message: ConversationTranscript.NewestShown
    ) -> None:
        message.stop()
        if not self._ready.is_set():  # a message sent meanwhile goes under them
            self._ready.set()
            self._echo()

    def reveal(self, message_id: int) -> None:
        """Show a stored message of the open conversation, marked (read first if need be)."""
        self.query_one(ConversationTranscript).show(message_id)

    def give_back_drafts(self, drafts: dict[str, Draft]) -> None:
        """The drafts runs that have ended left go back to the composer, their files attached
        again (read anew: a file gone or changed since is said, once a run)."""
        chips = self.query_one(ReadingChips)
        for path in self.query_one(ChatComposer).give_back_drafts(drafts):
            chips.attach(Path(path))

    def _files_attached(self) -> list[str]:
        # As the chips last said: the composer asks for them at the very end too, when the
        # chips may be gone already.
        return self._attached_paths

    def on_attachment_chips_changed(self, message: AttachmentChips.Changed) -> None:
        message.stop()
        chips = self.query_one(ReadingChips)
        # A file still being read is in the draft too: quit before its read ends, and the
        # next start reads it again.
        self._attached_paths = [file.path for file in chips.attachments if file.path]
        self._attached_paths += [str(path) for path in chips.being_read]
        self.query_one(ChatComposer).draft_changed()

    def give_back_unsent(self, text: str) -> bool:
        """A message a killed process left unsent goes back to the composer, once (True)."""
        if self._unsent_kept:
            return False  # it is this process's own, on its way
        composer = self.query_one(Composer)
        composer.text = text + (f"\n{composer.text}" if composer.text else "")
        self._forget_unsent()
        return True

    @property
    def busy(self) -> bool:
        """A reply is on its way (or the message waits for its conversation to open)."""
        return self._send is not None and self._send.state in (
            WorkerState.PENDING,
            WorkerState.RUNNING,
        )

    def on_composer_path_pasted(self, message: Composer.PathPasted) -> None:
        message.stop()
        self.query_one(ReadingChips).attach(message.path, message.text)

    def on_reading_chips_pasted_back(self, message: ReadingChips.PastedBack) -> None:
        message.stop()
        self.query_one(Composer).insert(message.text)

    def _forget_unsent(self) -> None:
        """The message kept aside is stored in its conversation (or back in the composer)."""
        self._unsent_kept = False
        self.data.keep_unsent("")

    def _hold_frames(self) -> None:
        if self._frames_held is None:
            self._frames_held = contextlib.ExitStack()
            self._frames_held.enter_context(self.app.batch_update())

    def _echo_grace_over(self) -> None:
        """ECHO_GRACE after Enter: what Enter changed is drawn, the request gone or not;
        unless a conversation opened meanwhile waits for the request itself."""
        if not self._page_waits:
            self._echo()

    def _release_frames(self) -> None:
        self._page_waits = False
        held, self._frames_held = self._frames_held, None
        if held is not None:
            held.close()
            if self.is_attached:
                self.screen.check_idle()  # what changed meanwhile is drawn in the next frame

    def on_unmount(self) -> None:
        self._release_frames()  # the app's frames are never left held

    def send_coming(self) -> None:
        """A message sent before this column existed is on its way to it."""
        self._request_left.clear()

    async def request_left(self, longest: float) -> None:
        """Once no message sent waits for its request to be on the wire, or after `longest`
        seconds (a message held back, such as one the user is asked about)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._request_left.wait(), longest)

    def _on_wire(self) -> None:
        """The request of the message sent is on the wire."""
        self._request_left.set()
        self._echo()

    def _echo(self) -> None:
        held = self._frames_held is not None
        self._release_frames()  # the request is on the wire, or ECHO_GRACE has passed
        if held:
            self._tick_activity()  # worked out now: it could not be drawn before
        # Not while a conversation is being opened: showing it would wipe the message.
        if self._unechoed is not None and self._ready.is_set():
            text, self._unechoed = self._unechoed, None
            self.query_one(Transcript).add_user(text, [a.label for a in self._echoed_files])

    def on_history_notice(self, message: HistoryNotice) -> None:
        self.query_one(Transcript).add_notice(message.text, before=self._stream.view)

    def on_key_notice(self, message: KeyNotice) -> None:
        self.notify(message.text, title=message.title, timeout=8)

    def on_reply_billed(self, message: ReplyBilled) -> None:
        self._billed = message.cost_usd
        if self._stream.view is not None:
            self._stream.view.add_usage(message.usage)

    def on_reply_done(self, message: ReplyDone) -> None:
        self._stream.flush(final=True)  # the whole reply is on screen
        if message.at_length_limit and self._stream.view is not None:
            self._stream.view.mark_stopped("at the length limit")

    def on_chat_composer_estimated(self, message: ChatComposer.Estimated) -> None:
        message.stop()
        self._estimate_line = message.line
        self._tick_activity()

    def _hold_blink(self, hold: bool) -> None:
        """While words arrive the cursor stays lit (each blink was a frame of its own); only
        a blink stopped here is given back."""
        composer = self.query_one(Composer)
        if hold and composer.cursor_blink:
            composer.cursor_blink, self._blink_held = False, True
        elif not hold and self._blink_held:
            composer.cursor_blink, self._blink_held = True, False

    def _tick_activity(self) -> None:
        """Draw the activity line: what the column is doing, or what the draft would cost."""
        activity = self.query_one(ActivityLine)
        now = self._clock()
        countdown = self._schedule.countdown(now)
        words_arriving = self.busy and now - self._words_at < WORDS_ARRIVING
        self._hold_blink(words_arriving)
        if countdown is None and self.busy:
            doing = "Reply on its way" if self._ready.is_set() else "Opening the conversation"
            steps = int((now - self._schedule.started) * 2) % 3
            activity.show_working(doing, 3 if words_arriving else 1 + steps)
        elif countdown is None:
            activity.show_idle(self._estimate_line)
        elif countdown.kind == "fallback":
            activity.show_fallback_countdown(countdown.what, countdown.to, countdown.seconds)
        elif countdown.kind == "retry":
            activity.show_retry_countdown(countdown.seconds)
        else:
            activity.show_rate_wait(countdown.seconds)
