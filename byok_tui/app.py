"""The Textual application: wiring services into screens, and crash reports without keys.

Textual's own crash report prints local variables (a key in a local, a headers dict or a URL
would be shown) and the process would exit 0. `ByokApp` replaces it with a redacted report
without locals, saved to the crash folder, and `run_until_exit` prints it and returns the
non-zero return code.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from textual.app import App
from textual.binding import Binding

from byok_tui.crash import report_crash
from byok_tui.keys import KeyStore, open_key_store
from byok_tui.keys.overview import KeyOverview, key_overview
from byok_tui.paths import AppPaths
from byok_tui.providers.registry import providers
from byok_tui.screens.providers import ProvidersScreen


class ByokApp(App[None]):
    TITLE = "byok-tui"
    SUB_TITLE = "bring your own key"
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True),
    ]

    def __init__(
        self,
        *,
        overview: KeyOverview,
        load_overview: Callable[[], KeyOverview],
        crash_dir: Path,
    ) -> None:
        super().__init__()
        self._first_overview = overview
        self._load_overview = load_overview
        self._crash_dir = crash_dir
        self.crash_report: str | None = None

    def on_mount(self) -> None:
        self.push_screen(ProvidersScreen(self._first_overview, self._load_overview))

    def _handle_exception(self, error: Exception) -> None:
        # Replaces App._handle_exception / App._fatal_error (textual 8.2): same bookkeeping,
        # but the report has no locals and is redacted before it reaches the screen or a file.
        self._return_code = 1
        if self._exception is None:
            self._exception = error
            self._exception_event.set()
        # Printed by run_until_exit once the terminal is restored, as plain text: Rich would
        # wrap and crop it (breaking the saved report's path) and interpret markup in it.
        self.crash_report = report_crash(error, self._crash_dir)
        self._close_messages_no_wait()


def build_app(paths: AppPaths, environ: dict[str, str] | None = None) -> ByokApp:
    """Open the key store and read every key before the first frame (seed 2.1)."""
    env = dict(os.environ) if environ is None else environ
    store: KeyStore = open_key_store(paths, env)

    def load() -> KeyOverview:
        return key_overview(providers(), store, env)

    return ByokApp(overview=load(), load_overview=load, crash_dir=paths.crash_dir)


def run_until_exit(app: ByokApp, *, headless: bool = False) -> int:
    """Run `app`; print its crash report, if any; return the process exit status."""
    app.run(headless=headless)
    if app.crash_report is not None:
        sys.stderr.write(app.crash_report + "\n")
    return app.return_code or 0


def run_app(paths: AppPaths) -> int:
    return run_until_exit(build_app(paths))
