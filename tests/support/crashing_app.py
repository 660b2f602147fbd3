"""Runs byok-tui's app headless with a screen that crashes while a key sits in its locals.

Used by the crash-report tests as a real process: `python -m tests.support.crashing_app`,
or `… crashing_app worker` for the real app whose first state read, in its opening worker,
meets a damaged database (Textual reports it as WorkerFailed, with no traceback of its own).
"""

from __future__ import annotations

import sqlite3
import sys

from textual.screen import Screen

from byok_tui.app import ByokApp, build_app, run_until_exit
from byok_tui.core.logs import configure_logging
from byok_tui.core.paths import app_paths
from byok_tui.core.registry import get_provider
from byok_tui.keys import open_key_store, resolve_key


class ExplodingScreen(Screen[None]):
    def on_mount(self) -> None:
        store = open_key_store(app_paths())
        key = resolve_key(get_provider("google"), store)
        headers = {"x-api-key": key.value, "authorization": f"Bearer {key.value}"}
        url = f"https://generativelanguage.googleapis.com/v1beta/models/m?key={key.value}"
        raise RuntimeError(f"provider call failed: {url} {headers}")


class CrashingApp(ByokApp):
    def on_mount(self) -> None:
        self.push_screen(ExplodingScreen())


def read_a_malformed_database(*_args: object, **_kwargs: object) -> None:
    """What the first state read (in the app's opening worker) meets in a damaged database."""
    key = resolve_key(get_provider("google"), open_key_store(app_paths()))
    raise sqlite3.DatabaseError(f"database disk image is malformed near {key.value}")


def main() -> int:
    configure_logging(None, stderr_warnings=False)
    app = build_app()
    if sys.argv[1:] == ["worker"]:
        import byok_tui.app_services.app_data

        # The data service's own name for it (imported from chat_state).
        setattr(byok_tui.app_services.app_data, "read_state", read_a_malformed_database)  # noqa: B010
    else:
        app.__class__ = CrashingApp
    return run_until_exit(app, headless=True)


if __name__ == "__main__":
    sys.exit(main())
