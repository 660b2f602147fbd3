"""The key bar at the bottom of every screen: Textual's Footer, redrawn once however many
changes of bindings arrive together (byok_tui/compat.py, point 6)."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer as TextualFooter

from byok_tui.compat import recompose_footer_once


class Footer(TextualFooter):
    def bindings_changed(self, screen: Screen[Any]) -> None:
        recompose_footer_once(self, screen)
