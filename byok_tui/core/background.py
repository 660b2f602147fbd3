"""Writes that the UI hands off: done on one background thread, in order, latest wins.

A key typed into a field is saved on every change, as it is typed: nothing typed is lost.
Each save runs off the UI thread; if several are queued for the same field only the newest
runs; and a send waits for pending saves first, so a key rotated and sent at once is the key
the request carries.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

log = logging.getLogger(__name__)


class SerialWriter:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[
            str, tuple[Callable[[], object], Callable[[Exception], None] | None]
        ] = {}
        self._order: list[str] = []
        self._idle = threading.Event()
        self._idle.set()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="byok-writer")

    def submit(
        self,
        name: str,
        write: Callable[[], object],
        on_error: Callable[[Exception], None] | None = None,
    ) -> None:
        with self._lock:
            if name not in self._pending:
                self._order.append(name)
            self._pending[name] = (write, on_error)
            self._idle.clear()
        self._executor.submit(self._drain)

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._order:
                    self._idle.set()
                    return
                name = self._order.pop(0)
                write, on_error = self._pending.pop(name)
            try:
                write()
            except Exception as error:
                log.warning("saving %s failed: %s", name, error)
                if on_error is not None:
                    on_error(error)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Block until every submitted write has run (True), or the timeout passed."""
        return self._idle.wait(timeout)

    def shutdown(self) -> None:
        self.wait_idle()
        self._executor.shutdown(wait=True)
