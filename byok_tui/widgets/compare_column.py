"""One target of a compare: headed by provider · model · the key it uses, its figures as they
come (time to first token, speed, then tokens in and out and cost), and its reply, streamed
as Markdown through the same one buffer as a chat reply (keys replaced before they are
shown), or its error with what to do. No I/O: the compare screen runs its send and hands
it the events.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from byok_tui.chat.compare import Outcome
from byok_tui.core.errors import ByokError
from byok_tui.spend.estimate import CHARS_PER_TOKEN
from byok_tui.widgets.following_scroll import FollowingScroll
from byok_tui.widgets.message_views import ErrorBlock, ReplyView
from byok_tui.widgets.reply_stream import ReplyStream

# Side by side, each column is drawn less often than a chat reply, in larger steps of height
# (each step is a layout of the screen): three paced replies cost 1.8x one in a terminal,
# 2.1x at ten frames a second and steps of 12 lines; its text comes a line or two a step
# at a model's usual speed.
COLUMN_FRAME_SECONDS = 1 / 5
COLUMN_HEADROOM = 16


class CompareColumn(Vertical, can_focus=True):
    # The scrollbar's place is kept from the start: a reply outgrowing its column would
    # otherwise be drawn again whole, at a new width, in the frame the scrollbar appears.
    DEFAULT_CSS = """
    CompareColumn { width: 1fr; height: 1fr; border: round $foreground 20%; padding: 0 1; }
    CompareColumn:focus-within, CompareColumn:focus { border: round $accent; }
    CompareColumn > .head { text-style: bold; }
    CompareColumn > .figures { color: $text-muted; }
    CompareColumn > FollowingScroll { height: 1fr; margin-top: 1; scrollbar-gutter: stable; }
    CompareColumn ReplyView { margin: 0; }
    CompareColumn ErrorBlock { margin: 1 0 0 0; }
    """

    def __init__(
        self, outcome: Outcome, number: int, max_tokens: int, *, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.outcome = outcome
        self._max_tokens = max_tokens  # its request's length limit, said if it reaches it
        self.number = number  # 1 to 4: its key
        self._stream = ReplyStream(self, frame=COLUMN_FRAME_SECONDS, headroom=COLUMN_HEADROOM)
        self._chars = 0
        # waiting, streaming, done, cut (at its length limit), stopped, failed
        self.state = "waiting"

    def compose(self) -> ComposeResult:
        yield Static(self._head(), classes="head")
        yield Static(Text("waiting to send…"), classes="figures")
        with FollowingScroll():  # the newest text in view, unless the reader scrolls up
            yield ReplyView()

    def on_mount(self) -> None:
        self._stream.show_in(self.query_one(ReplyView))
        self._ticker = self.set_interval(0.5, self._tick, pause=True)

    def _tick(self) -> None:
        self.show_figures(ticking=True)

    @property
    def has_text(self) -> bool:
        return self._chars > 0

    @property
    def running(self) -> bool:
        return self.state in ("waiting", "streaming")

    def _head(self) -> Text:
        outcome = self.outcome
        head = Text(f"{self.number} · {outcome.provider} · {outcome.model}")
        if outcome.key_source:
            head.append(f" · key: {outcome.key_source}", style="dim")
        return head

    def started(self) -> None:
        """Its send began (its figures count from now)."""
        self.state = "streaming"
        self._ticker.resume()
        self.show_figures()

    def add(self, event: object) -> None:
        """One event of its send: its text shown, its figures noted."""
        had_key = bool(self.outcome.key_source)
        text = self.outcome.note(event, self._max_tokens)
        if text:
            self._chars += len(text)
            self._stream.write_text(text)
        if not had_key and self.outcome.key_source:
            self.query_one(".head", Static).update(self._head())

    def ended(self, error: ByokError | None = None, *, stopped: bool = False) -> None:
        """Its send ended: whole, stopped by the user, or with `error` (shown with its
        remedy)."""
        self._ticker.pause()
        self.outcome.ended()
        if error is not None:
            self.outcome.error = error
        if not self.query(".figures"):
            return  # the app is ending and has taken the column down: nothing to draw
        self._stream.flush(final=True)
        # A reply cut at its length limit is whole as far as the wire goes, but not "done".
        said = error or (None if stopped else self.outcome.error)
        if said is not None:
            self.query_one(FollowingScroll).mount(ErrorBlock(said.message, said.remedy or ""))
        self.state = "failed" if error else "stopped" if stopped else "cut" if said else "done"
        self.show_figures()

    def show_figures(self, *, ticking: bool = False) -> None:
        """`ticking`: the half-second update while it streams, drawn without a layout of the
        screen (its line may wrap differently only at the end)."""
        outcome = self.outcome
        said = outcome.figures()
        if self.state == "streaming" and outcome.first_token_s is not None and outcome.begun:
            # While it streams, its speed from its characters; the provider's count at the end.
            writing = time.monotonic() - outcome.begun - outcome.first_token_s
            if writing > 0.2:
                said.append(f"≈ {self._chars / CHARS_PER_TOKEN / writing:.0f} tokens/s")
        elif self.state == "streaming":
            said.append("waiting for the first token…")
        if self.state == "stopped":
            said.append("stopped")
        elif self.state == "cut":
            said.append("at its length limit")
        elif self.state == "failed":
            said.append("failed")
        self.query_one(".figures", Static).update(Text(" · ".join(said)), layout=not ticking)
