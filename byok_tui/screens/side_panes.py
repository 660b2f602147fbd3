"""Which side panes (sidebar, config pane) show, and whether beside the conversation or over it.

The conversation keeps MIN_CONVERSATION_WIDTH columns: a pane that would leave it fewer floats
over it (CSS class `floating`, docked on a layer of its own), and at most one pane floats. A
pane the user has shown or hidden stays so; the others follow the terminal's width.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widget import Widget

MIN_CONVERSATION_WIDTH = 48
NARROW = 120  # below this terminal width the config pane starts hidden
TINY = 90  # below this width the sidebar starts hidden too
STARTS_SHOWN_FROM = {"#config": NARROW, "#sidebar": TINY}  # terminal width


class SidePanes:
    def __init__(self, screen: Screen[None]) -> None:
        self._screen = screen
        self._chosen: dict[str, bool] = {}  # shown (True) or hidden by the user

    def shown_at(self, selector: str, width: int) -> bool:
        """Whether the pane shows in a terminal `width` columns wide."""
        return self._chosen.get(selector, width >= STARTS_SHOWN_FROM[selector])

    def toggle(self, selector: str) -> None:
        """Show the pane if hidden, else hide it; a pane not mounted yet (the config pane
        comes just after the screen's first frame) comes as chosen."""
        found = self._screen.query(selector)
        if not found:
            self._chosen[selector] = not self.shown_at(selector, self._screen.size.width)
            return
        pane = found.first()
        pane.display = self._chosen[selector] = not pane.display
        self.fit(keep=selector if pane.display else None)

    def kept_for(self, selector: str, pane_width: int) -> int:
        """The cells to keep free, right of the conversation, for a pane still to come:
        `pane_width` when it will sit beside it (shown, with room), else 0."""
        width = self._screen.size.width
        if not self.shown_at(selector, width):
            return 0
        shown = [pane for pane in self._screen.query(", ".join(STARTS_SHOWN_FROM)) if pane.display]
        room = self._room(shown) - pane_width
        return pane_width if room >= MIN_CONVERSATION_WIDTH else 0

    def resized(self, width: int) -> None:
        for selector in STARTS_SHOWN_FROM:
            for pane in self._screen.query(selector):
                pane.display = self.shown_at(selector, width)
        self.fit()

    def fit(self, keep: str | None = None) -> None:
        """Beside the conversation while it keeps its width; else one pane floats over it,
        and the other (not `keep`, the one just asked for) closes."""
        shown = [pane for pane in self._screen.query(", ".join(STARTS_SHOWN_FROM)) if pane.display]
        if len(shown) == 2 and self._room(shown) < MIN_CONVERSATION_WIDTH:
            closing = next(pane for pane in shown if f"#{pane.id}" != (keep or "#config"))
            closing.display = self._chosen[f"#{closing.id}"] = False
            shown.remove(closing)
        floating = self._room(shown) < MIN_CONVERSATION_WIDTH
        for pane in shown:
            pane.set_class(floating, "floating")

    def _room(self, shown: list[Widget]) -> int:
        widths = (int(pane.styles.width.value) for pane in shown if pane.styles.width)
        return self._screen.size.width - sum(widths)
