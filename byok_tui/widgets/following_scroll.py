"""A vertical scroll that keeps the newest text in view while the reader is at its bottom,
in the very frame the content grows, and lets go as soon as the reader scrolls up (taken up
again at the bottom). Its growth asks for no second layout (byok_tui/compat.py, points 1 to
3). The chat's transcript and each column of a compare are one.
"""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.layout import DockArrangeResult

from byok_tui.compat import scroll_in_layout, virtual_size_set_by_layout

FOLLOW_SLACK = 2  # lines from the bottom that still count as reading the newest text


class FollowingScroll(VerticalScroll):
    virtual_size = virtual_size_set_by_layout()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._following = True  # the reader is at the bottom: new text stays in view

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        # Scrolled by the reader (or to the end by us): follow only from the bottom, or
        # from near it on the way down. Any move up leaves it: a wheel notch is about as
        # long as the slack, and every notch would snap back at the next layout.
        bottom = self.max_scroll_y
        self._following = new >= bottom or (new > old and new >= bottom - FOLLOW_SLACK)

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        arrangement = super().arrange(size, optimal)
        bottom = max(0, arrangement.total_region.bottom - size.height)
        if self._following and bottom != self.scroll_y:
            # Keep the bottom in view in the very frame the content grows (byok_tui/compat.py,
            # point 3: what to do once textual#6677 is fixed).
            scroll_in_layout(self, bottom)
        return arrangement
