"""Baseline for start-up: the smallest Textual app that draws one line."""

from textual.app import App, ComposeResult
from textual.widgets import Static


class MinimalApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("minimal-app-ready")


if __name__ == "__main__":
    MinimalApp().run()
