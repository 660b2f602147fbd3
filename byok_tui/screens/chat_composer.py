"""The chat column's composer. It says what sending its text would cost: worked out once typing
pauses, in a worker thread through the data service (a local estimate of the whole request,
history included: never a request); the column shows the line while nothing else is going on.
And it keeps its draft: what is typed is handed to the data service's writer within a second,
and at once when the app ends, so that no exit (a quit, a crash, a kill) loses more than that
second; the next start gives it back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual import work
from textual.message import Message
from textual.timer import Timer
from textual.widgets import TextArea

from byok_tui.app_services.app_data import AppData
from byok_tui.core.errors import ByokError
from byok_tui.core.records import Draft
from byok_tui.widgets.composer import Composer

ESTIMATE_PAUSE = 0.3  # seconds of no typing before the draft's cost is estimated
DRAFT_KEPT_WITHIN = 1.0  # seconds: what is typed is kept at most this long after it is typed


class ChatComposer(Composer):
    @dataclass
    class Estimated(Message):
        """What sending the composer's text would cost, in words (empty: nothing to say)."""

        line: str

    def __init__(
        self,
        data: AppData,
        sending_to: Callable[[], tuple[int | None, int | None]],
        files: Callable[[], list[str]],
    ) -> None:
        """`sending_to`: the bot and the conversation a message would go to now (None: no bot
        is open yet; a new conversation). `files`: the paths of the files attached now."""
        super().__init__()
        self.data = data
        self._sending_to = sending_to
        self._files = files
        self._pause: Timer | None = None
        # Nothing is kept before the last run's draft is given back: it would overwrite it.
        self._keeping = False
        self._kept = Draft()  # the draft as last handed to the writer (empty: none yet)
        self._taken_over = False  # drafts of ended runs were given back: they go at the end
        self._keep_due: Timer | None = None

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if event.text_area is not self:
            return
        self.estimate_soon()
        self.draft_changed()

    def estimate_soon(self) -> None:
        """Work out what sending the draft would cost once typing pauses: after each key, and
        when what it would go to changed (another conversation or bot, the bot's settings)."""
        # A keystroke only restarts this timer: the estimate waits for typing to pause.
        if self._pause is not None:
            self._pause.stop()
        self._pause = self.set_timer(ESTIMATE_PAUSE, self._estimate)

    # The draft, kept for the next start ------------------------------------------------------

    @property
    def kept_draft(self) -> Draft:
        """What an exit must not lose: the text (an edit's changes too) and the files."""
        return Draft(self.draft, tuple(self._files()))

    def give_back_drafts(self, drafts: dict[str, Draft]) -> list[str]:
        """Put back the text of the drafts of runs that have ended (before anything typed
        since), once; from then on what is typed is kept, in their place. Returns the paths
        of their files, for the caller to attach again."""
        if self._keeping:
            return []
        # Kept in their place at the next change (this one's, if text comes back or was typed
        # meanwhile: by then its files are attached again) or at the end; until then theirs
        # stay as they were, so a kill now loses nothing.
        self._keeping, self._taken_over = True, bool(drafts)
        self.data.drafts.take_over(list(drafts))
        texts = [draft.text for draft in drafts.values() if draft.text]
        if texts:
            self.text = "\n\n".join(texts) + (f"\n{self.text}" if self.text else "")
            self.move_cursor(self.document.end)
        elif self.text:
            self.draft_changed()  # typed before: no change is coming
        return [path for draft in drafts.values() for path in draft.files]

    def draft_changed(self) -> None:
        """The text or the files attached changed: kept within DRAFT_KEPT_WITHIN."""
        if not self._keeping:
            return
        if not self.kept_draft:  # sent or cleared: kept at once, so a sent one never returns
            if self._keep_due is not None:
                self._keep_due.stop()
            self._keep_draft()
        elif self._keep_due is None:  # not restarted by each key: kept while typing goes on
            self._keep_due = self.set_timer(DRAFT_KEPT_WITHIN, self._keep_draft)

    def _keep_draft(self, *, ending: bool = False) -> None:
        self._keep_due = None
        draft = self.kept_draft
        if draft != self._kept or ending:
            self._kept = draft
            self.data.drafts.keep(draft, ending=ending)

    def on_unmount(self) -> None:
        # The app is ending (the app waits for its writes before it goes): kept now, as a
        # run that has ended, so that the next start gives it back.
        if self._keeping and (self.kept_draft or self._kept or self._taken_over):
            self._keep_draft(ending=True)

    def _estimate(self) -> None:
        self._pause = None
        bot_id, conversation_id = self._sending_to()
        if not self.text.strip() or bot_id is None:
            self.post_message(self.Estimated(""))
            return
        self._estimate_worker(bot_id, conversation_id, self.text, self.editing)

    @work(thread=True, exclusive=True, group="estimate", exit_on_error=False)
    def _estimate_worker(
        self, bot_id: int, conversation_id: int | None, draft: str, edit_of: int | None
    ) -> None:
        try:
            line = self.data.estimate(bot_id, conversation_id, draft, edit_of)
        except ByokError:
            line = ""  # an estimate is a nicety: a read that failed is said elsewhere
        self.post_message(self.Estimated(line))
