"""Textual's OptionList, whose page keys do nothing while it has no room to show a line.

Textual's own lays its options out in lines only once it has room, and PageDown or PageUp
then looked up a line that was never made (KeyError): in a terminal five lines high, the
search's hits ended the app with a crash report.
"""

from __future__ import annotations

from textual.widgets import OptionList as TextualOptionList


class OptionList(TextualOptionList):
    def action_page_down(self) -> None:
        if self.scrollable_content_region:
            super().action_page_down()  # type: ignore[no-untyped-call]

    def action_page_up(self) -> None:
        if self.scrollable_content_region:
            super().action_page_up()  # type: ignore[no-untyped-call]
