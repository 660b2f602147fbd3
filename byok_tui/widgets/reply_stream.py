"""The one buffer between the send worker and the reply on screen.

The worker writes what arrives; the text reaches the reply view at most once a frame (the first
text after a quiet spell at once), joined. Rendering each token on its own cannot keep up with
a fast stream: a message or a render per token starved the event loop on a 5,000-token reply.

What is shown has the user's keys replaced, even a key cut across two writes: a model that
echoes a key never puts it on screen.
"""

from __future__ import annotations

import asyncio
import contextlib
from time import monotonic

from textual.screen import Screen
from textual.widget import Widget

from byok_tui.core.redaction import StreamRedactor
from byok_tui.widgets.markdown_text import BURST_CHARS, STREAM_HEADROOM
from byok_tui.widgets.message_views import ReplyView

# Ten frames a second: text appears in steps of a few words, as smooth to read as twenty, at
# half the cost (a frame lays out and redraws the whole transcript as it scrolls).
FRAME_SECONDS = 1 / 10
BURST_FRAME_SECONDS = 1 / 7  # while catching up with a burst: fewer, larger batches


class ReplyStream:
    """Accumulates a reply's text and reasoning, and flushes them to its view once a frame.

    Text written before the view exists waits for `show_in`.
    """

    def __init__(
        self,
        owner: Widget,
        *,
        frame: float = FRAME_SECONDS,
        headroom: int = STREAM_HEADROOM,
    ) -> None:
        """`frame`: seconds between flushes; `headroom`: lines laid out ahead of the text."""
        self._owner = owner  # whose timers pace the flushes
        self._frame, self._headroom = frame, headroom
        self._view: ReplyView | None = None
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._redactors = (StreamRedactor(), StreamRedactor())  # text, reasoning
        self._flush_due = False
        self._due: asyncio.TimerHandle | None = None
        self._last_flush = 0.0
        self._last_flush_chars = 0
        self._first_drawn = asyncio.Event()
        self._watching_first = False

    @property
    def view(self) -> ReplyView | None:
        return self._view

    def show_in(self, view: ReplyView) -> None:
        """The reply is on screen: what was written so far goes to it."""
        self._view = view
        self._schedule()

    def write_text(self, text: str) -> None:
        self._text.append(text)
        self._schedule()

    def write_reasoning(self, text: str) -> None:
        self._reasoning.append(text)
        self._schedule()

    async def first_words_drawn(self, timeout: float) -> None:
        """Wait (at most `timeout`) until a frame shows the reply's first words."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._first_drawn.wait(), timeout)

    def _schedule(self) -> None:
        if self._flush_due or self._view is None or not (self._text or self._reasoning):
            return
        self._flush_due = True
        bursting = self._last_flush_chars >= BURST_CHARS
        frame = max(self._frame, BURST_FRAME_SECONDS) if bursting else self._frame
        now = monotonic()
        wait = self._last_flush + frame - now
        if wait > 0:
            # On a grid of frames shared by every stream: replies streaming side by side (a
            # compare) flush in the same turn of the loop and are drawn in one frame, not in
            # one frame each.
            wait = round((self._last_flush + frame) / frame) * frame - now
        if wait > 0:
            # The loop's own timer, the flush then run by the owner as set_timer would: a
            # Textual timer is a task of its own, made and ended ten times a second.
            loop = asyncio.get_running_loop()
            self._due = loop.call_later(wait, self._owner.call_next, self._flush_if_due)
        else:
            # After the writer's turn, so that what arrives in the same read goes out together
            # (not a zero-delay timer: Textual's timer divides by its interval).
            self._owner.call_later(self._flush_if_due)

    def _flush_if_due(self) -> None:
        # A flush asked for may find the text already shown, by the reply's end (its final
        # flush, in the same turn): it must not lay out lines ahead of an ended reply again.
        if self._flush_due:
            self.flush()

    def flush(self, *, final: bool = False) -> None:
        """Show what was written; `final`: all of it, keys held back included (the reply ended)."""
        if self._due is not None:
            self._due.cancel()
            self._due = None
        self._flush_due = False
        view = self._view
        if view is None:
            return
        shown_text, shown_reasoning = self._redactors
        text = shown_text.feed("".join(self._text))
        reasoning = shown_reasoning.feed("".join(self._reasoning))
        self._text, self._reasoning = [], []
        if final:
            text, reasoning = text + shown_text.flush(), reasoning + shown_reasoning.flush()
        if not final:
            view.grow_ahead(self._headroom)
        if text or reasoning:
            self._last_flush = monotonic()
            self._last_flush_chars = len(text) + len(reasoning)
            if reasoning:
                view.append_reasoning(reasoning)
            if text:
                view.append_text(text)
        if final:
            # Once the last text is in the lines laid out ahead (drawn as the lines it changed),
            # the room is taken away: a layout, whose frame draws what it resizes. Taken away
            # first, the last text was a layout and a repaint of the whole reply, and a flush
            # still waiting for its frame drew all of it at its old height before the layout.
            view.grow_ahead(0)
        if not (text or reasoning):
            return
        if not self._watching_first:
            self._watching_first = True
            self._when_drawn(view)

    def _when_drawn(self, view: ReplyView) -> None:
        """Note when the next layout has drawn what `view` was just given."""
        if not view.is_running:  # not started yet: nothing to wait for
            self._first_drawn.set()
            return
        signal = view.screen.screen_layout_refresh_signal

        def laid_out(_screen: Screen[object]) -> None:
            signal.unsubscribe(view)
            self._first_drawn.set()

        signal.subscribe(view, laid_out, immediate=True)
