"""Logging for byok-tui: every handler formats through `RedactingFormatter`.

The formatter redacts the finished text (message, arguments, traceback and stack alike), so a
record from any logger, httpx and httpcore included, cannot carry a key into a log file.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from byok_tui.core.paths import make_private_dirs
from byok_tui.core.redaction import redact

LOG_ENV = "BYOK_TUI_LOG"
_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


class RedactingFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def _open_private_log(path: Path) -> logging.FileHandler:
    make_private_dirs(path.parent)  # the user's choice of folder: created, never changed
    # Create it 0600 before logging.FileHandler opens it: a log can hold prompts and replies.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.close(fd)
    return logging.FileHandler(path, encoding="utf-8")


def configure_logging(log_file: Path | None, *, stderr_warnings: bool) -> None:
    """Install redacting handlers on the root logger.

    `log_file` gets everything at DEBUG. `stderr_warnings` prints warnings and errors for the
    command-line subcommands; the full-screen app passes False because stray writes would tear
    its screen. Either way the root logger gets a handler, so Python's last-resort handler,
    which does not redact, is never used.
    """
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    formatter = RedactingFormatter(_FORMAT)
    if log_file is not None:
        file_handler = _open_private_log(log_file)
        file_handler.setFormatter(formatter)
        file_handler.setLevel(logging.DEBUG)
        root.addHandler(file_handler)
        root.setLevel(logging.DEBUG)
    else:
        root.setLevel(logging.WARNING)
    if stderr_warnings:
        stream_handler = logging.StreamHandler(sys.stderr)
        stream_handler.setFormatter(RedactingFormatter("byok-tui: %(levelname)s: %(message)s"))
        stream_handler.setLevel(logging.WARNING)
        root.addHandler(stream_handler)
    if not root.handlers:
        root.addHandler(logging.NullHandler())
    logging.captureWarnings(True)
