"""The chat column's composer, saying what sending its text would cost: worked out once typing
pauses, in a worker thread through the data service (a local estimate of the whole request,
history included: never a request). The column shows the line while nothing else is going on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual import work
from textual.message import Message
from textual.timer import Timer
from textual.widgets import TextArea

from byok_tui.app_data import AppData
from byok_tui.errors import ByokError
from byok_tui.widgets.composer import Composer

ESTIMATE_PAUSE = 0.3  # seconds of no typing before the draft's cost is estimated


class EstimatingComposer(Composer):
    @dataclass
    class Estimated(Message):
        """What sending the composer's text would cost, in words (empty: nothing to say)."""

        line: str

    def __init__(
        self, data: AppData, sending_to: Callable[[], tuple[int | None, int | None]]
    ) -> None:
        """`sending_to`: the bot and the conversation a message would go to now (None: no bot
        is open yet; a new conversation)."""
        super().__init__()
        self.data = data
        self._sending_to = sending_to
        self._pause: Timer | None = None

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if event.text_area is not self:
            return
        # A keystroke only restarts this timer: the estimate waits for typing to pause.
        if self._pause is not None:
            self._pause.stop()
        self._pause = self.set_timer(ESTIMATE_PAUSE, self._estimate)

    def _estimate(self) -> None:
        self._pause = None
        bot_id, conversation_id = self._sending_to()
        if not self.text.strip() or bot_id is None:
            self.post_message(self.Estimated(""))
            return
        self._estimate_worker(bot_id, conversation_id, self.text)

    @work(thread=True, exclusive=True, group="estimate", exit_on_error=False)
    def _estimate_worker(self, bot_id: int, conversation_id: int | None, draft: str) -> None:
        try:
            line = self.data.estimate(bot_id, conversation_id, draft)
        except ByokError:
            line = ""  # an estimate is a nicety: a read that failed is said elsewhere
        self.post_message(self.Estimated(line))
