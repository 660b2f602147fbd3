"""What the parts of the app's data service share: the opened context, and the service's one
writer, through which each part writes in order with the others (a read waits for the writes
queued before it) and reports a failed write as the service does (app_data.py says how)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from byok_tui.app_services.services import AppContext

T = TypeVar("T")


class Submits(Protocol):
    def __call__(self, name: str, what: str, write: Callable[[], object]) -> None:
        """Queue `write` (the newest of those named `name`); a failure is said as `what`."""


class Runs(Protocol):
    def __call__(self, name: str, write: Callable[[], T]) -> T:
        """Run `write` in order with the others and return its result (or raise)."""


class DataPart:
    def __init__(
        self, context: AppContext, submit: Submits, run: Runs, settled: Callable[[], None]
    ) -> None:
        self._context = context
        self._submit = submit
        self._run = run
        self._settled = settled  # returns once every write queued before has run
