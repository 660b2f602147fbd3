"""Editing a message in the user's $VISUAL or $EDITOR.

The text goes to a private temporary file (0600, removed afterwards), the editor runs as an
argument list (no shell) in an environment without provider keys, and the text is read back
only if it exits with status 0. No Textual here: the caller hands the terminal over.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from byok_tui.core.child_env import child_environment
from byok_tui.core.paths import read_bounded
from byok_tui.core.system import split_command

LARGEST_EDIT = 16 * 1024 * 1024  # a message, however long


@dataclass(frozen=True, slots=True)
class Edited:
    text: str | None  # None: the message stays as it was
    problem: str | None = None  # why, in a sentence for the user


def edit_text(text: str, *, capture: bool, environ: Mapping[str, str] | None = None) -> Edited:
    """Run the editor on `text`; `capture`: no terminal to hand over (its output is kept)."""
    env = os.environ if environ is None else environ
    command = split_command(env.get("VISUAL") or env.get("EDITOR") or "vi")
    fd, name = tempfile.mkstemp(prefix="byok-message-", suffix=".md")  # 0600
    path = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        result = subprocess.run(
            [*command, name], env=child_environment(env), check=False, capture_output=capture
        )
        if result.returncode != 0:
            return Edited(
                None,
                f"The editor exited with status {result.returncode}; the message was not changed.",
            )
        # Our own temp file, but the editor may have replaced it: read bounded, as any file.
        edited = read_bounded(path, LARGEST_EDIT).decode("utf-8", errors="replace")
        return Edited(edited.rstrip("\n"))
    except OSError as error:
        return Edited(None, f"Cannot run the editor {command[0]!r}: {error.strerror}")
    finally:
        path.unlink(missing_ok=True)
