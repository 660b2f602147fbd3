"""Baseline for start-up and memory: the smallest Textual app that draws one line.

With `--libraries FILE`, benchmark 6's floor: first it imports every module named in FILE
(one a line; byok-tui's own are skipped) and makes an HTTP client that verifies TLS, as
byok-tui's own does (its certificate store is most of what a client holds), so that its
memory is what those libraries cost with none of byok-tui's code or widgets."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Static


class MinimalApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("minimal-app-ready")


def load_libraries(listing: Path) -> Any:
    """Import the modules listed, but byok-tui's own; the HTTP client, kept alive."""
    for name in listing.read_text().split():
        if name != "__main__" and not name.startswith(("byok_tui", "benchmarks")):
            importlib.import_module(name)
    import httpx

    return httpx.AsyncClient(verify=True)  # its TLS context is most of what it holds


if __name__ == "__main__":
    client = None
    if sys.argv[1:2] == ["--libraries"]:
        client = load_libraries(Path(sys.argv[2]))
    MinimalApp().run()
