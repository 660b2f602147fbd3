"""The database as commands open it: a long upgrade says how far it is on standard error."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from byok_tui.app_services import services

if TYPE_CHECKING:
    from byok_tui.app_services.services import Services
    from byok_tui.storage.store import Store

# An upgrade with fewer messages to index than this says nothing (it takes about a second).
QUIET_UPGRADE = 20_000
# Off a terminal, the first step is said, then the end.
FIRST_STEP = 10_000


def print_progress(done: int, total: int) -> None:
    """One line, kept up to date on a terminal."""
    if total < QUIET_UPGRADE:
        return
    said = f"byok-tui: indexing messages for search (once, after an upgrade): {done:,} of {total:,}"
    if sys.stderr.isatty():
        print(f"\r{said}", end="\n" if done >= total else "", file=sys.stderr, flush=True)
    elif done >= total or done <= FIRST_STEP:
        print(said, file=sys.stderr, flush=True)


def open_store(opened: services.Services) -> Store:
    """The database, upgraded first if it must be, with progress."""
    return services.open_store(opened, print_progress)


def open_with_default_bot() -> tuple[Services, Store]:
    """Services and the database (upgraded first, with progress), with the default bot made
    if there is none yet."""
    opened = services.open_services()
    store = open_store(opened)
    services.default_bot(opened, store)
    return opened, store
