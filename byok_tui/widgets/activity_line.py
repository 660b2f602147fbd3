"""The line under the transcript that says what is going on: a reply on its way, a wait a
rate limit imposes, a retry counting down. Updated twice a second without a layout (its
size is fixed), and drawn only when its words change."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


class ActivityLine(Static):
    DEFAULT_CSS = """
    ActivityLine {
        height: 1;
        width: 1fr;  /* a fixed size: its text changes every half second without a layout */
        padding: 0 2;
        color: $text-muted;
    }
    ActivityLine.busy { color: $accent; }
    /* A fallback's countdown: what failed and what comes, on the lines a narrow column needs */
    ActivityLine.tall { height: auto; max-height: 4; }
    """

    def show_retry_countdown(self, seconds: int) -> None:
        """A rate-limited message is sent again by itself in `seconds`."""
        self._say(f"⏳ Rate limited · retry in {seconds} s · Esc cancels", busy=True)

    def show_fallback_countdown(self, what: str, fallback: str, seconds: int) -> None:
        """The bot's provider failed (`what`): its next fallback is asked in `seconds`."""
        self._say(
            f"⏳ {what}. Switching to {fallback} in {seconds} s (Esc to stay)", busy=True, tall=True
        )

    def show_rate_wait(self, seconds: int) -> None:
        """The message waits `seconds` before it is sent, as the model's limit asks."""
        self._say(f"⏳ Rate limit: sending in {seconds} s · Esc stops", busy=True)

    def show_working(self, doing: str, dots: int) -> None:
        self._say(f"● {doing}{'.' * dots:<3} (Esc stops)", busy=True)

    def show_idle(self, estimate: str = "") -> None:
        """Nothing going on: the estimate of what the message being typed would cost."""
        self._say(estimate, busy=False)

    _said: tuple[str, bool, bool] | None = None

    def _say(self, line: str, *, busy: bool, tall: bool = False) -> None:
        if (line, busy, tall) == self._said:
            return  # the same words: no frame to draw
        self._said = (line, busy, tall)
        # More than one line only for a fallback's countdown (a layout as it starts and
        # ends): its names do not fit one line of a narrow column.
        self.update(Text(line), layout=tall != self.has_class("tall"))
        self.set_class(busy, "busy")
        self.set_class(tall, "tall")
