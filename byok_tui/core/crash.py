"""Crash reports that never show a key.

Rich's and Textual's default reports print local variables, where a key, a headers dict or a
request URL may sit. Ours prints the plain traceback (no locals), redacted, and saves a copy
(mode 0600) in the crash folder so it can be attached to a bug report.
"""

from __future__ import annotations

import logging
import os
import sys
import time
import traceback
import uuid
from pathlib import Path

from byok_tui.core.paths import ensure_private_dir
from byok_tui.core.redaction import redact

log = logging.getLogger(__name__)


def crash_report(error: BaseException) -> str:
    """The redacted traceback of `error`, without local variables.

    A worker's failure reaches the app as Textual's WorkerFailed, created in another thread
    and never raised: it has no traceback of its own. The report shows the traceback of the
    error it carries, with the files and lines that raised it.
    """
    parts = traceback.format_exception(error)
    worker = sys.modules.get("textual.worker")  # not loaded: it cannot be a WorkerFailed
    if worker is not None and isinstance(error, worker.WorkerFailed):
        inner: BaseException = error.error
        parts = [*traceback.format_exception(inner), "\nraised in a worker, reported as:\n"]
        parts.append(f"{type(error).__name__}: {error}\n")
    return redact("".join(parts))


def save_crash_report(report: str, crash_dir: Path) -> Path | None:
    """Write `report` to a new file in `crash_dir`; None when it cannot be written."""
    try:
        ensure_private_dir(crash_dir)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = crash_dir / f"crash-{stamp}-{os.getpid()}-{uuid.uuid4().hex[:6]}.txt"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(report)
    except OSError as error:
        log.warning("could not save the crash report: %s", error)
        return None
    return path


def report_crash(error: BaseException, crash_dir: Path) -> str:
    """Log and save a crash; return the text to show the user."""
    report = crash_report(error)
    log.error("byok-tui crashed:\n%s", report)
    saved = save_crash_report(report, crash_dir)
    footer = f"\nA copy of this report was saved to {saved}" if saved else ""
    return f"byok-tui crashed. This report shows no keys.\n\n{report}{footer}"
