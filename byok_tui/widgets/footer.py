"""The key bar at the bottom of every screen: Textual's Footer, redrawn once however many
changes of bindings arrive together (byok_tui/compat.py, point 6), each key styled once as
it is made (point 24: applied as the first footer is made, not before the first frame, which
draws no Footer)."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer as TextualFooter

from byok_tui.compat import footer_keys_styled_once, recompose_footer_once


class Footer(TextualFooter):
    def __init__(self, *children: Widget, **options: Any) -> None:
        footer_keys_styled_once()  # before any key is composed, in this footer or another
        super().__init__(*children, **options)

    def bindings_changed(self, screen: Screen[Any]) -> None:
        recompose_footer_once(self, screen)
