"""Baseline for start-up and memory: the smallest Textual app that draws one line.

With `--libraries FILE`, benchmark 6's floor: first it imports every module named in FILE
(one a line; byok-tui's own are skipped) and makes an HTTP client that verifies TLS, as
byok-tui's own does (its certificate store is most of what a client holds), so that its
memory is what those libraries cost with none of byok-tui's code or widgets. With
`--modules FILE`, the same with byok-tui's own modules imported too: what the code the app
has loaded costs with nothing of it run (no widget, no database, no key read)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Static

# Never imported here: the app's entry point would start the app.
ENTRY_POINTS = ("__main__", "byok_tui.__main__")


class MinimalApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("minimal-app-ready")


def load_libraries(listing: Path, *, own: bool = False) -> Any:
    """Import the modules listed, but byok-tui's own unless `own`; the HTTP client, kept
    alive."""
    for name in listing.read_text().split():
        if name in ENTRY_POINTS or name.startswith("benchmarks"):
            continue
        if own or not name.startswith("byok_tui"):
            importlib.import_module(name)
    import httpx

    return httpx.AsyncClient(verify=True)  # its TLS context is most of what it holds


if __name__ == "__main__":
    client = None
    if sys.argv[1:2] in (["--libraries"], ["--modules"]):
        client = load_libraries(Path(sys.argv[2]), own=sys.argv[1] == "--modules")
    MinimalApp().run()
