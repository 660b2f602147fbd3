"""Untrusted text made safe for a terminal: the one boundary for text from outside.

Model output, provider error bodies, model lists, imports, share links and prompts piped in
may hold terminal escape sequences (ANSI colours, OSC 52 clipboard writes, OSC 8 links, title
changes, DCS), C1 controls and bidi overrides (which make text read otherwise than it is).
None may reach the terminal, so every escape sequence, every control character but newline
and tab, and every bidi control is removed. Printable text, Unicode included, is untouched.

Where it is applied: the providers layer for what arrives and is shown without being stored
(model lists, errors, replies); the store for everything it writes; the CLI's output streams
as a last check. Never imports Textual.
"""

from __future__ import annotations

import re

# ESC-introduced sequences: CSI (ESC [ … final), OSC/DCS/SOS/PM/APC (ESC ] … BEL or ST),
# and two-character escapes; plus their 8-bit C1 forms.
_ESCAPES = re.compile(
    r"""
    (?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]                      # CSI
    | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]).*?(?:\x07|\x1b\\|\x9c|$)  # OSC, DCS, SOS, PM, APC
    | \x1b[ -/]*[0-~]                                     # other escapes
    """,
    re.VERBOSE | re.DOTALL,
)
# C0 and C1 controls (not newline or tab), DEL, and the bidi controls: embeddings, overrides,
# isolates and marks.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_WHITE_SPACE = re.compile(r"\s+")


def has_terminal_controls(text: str) -> bool:
    """Whether `text` holds anything strip_terminal_controls would remove."""
    return _CONTROLS.search(text) is not None


def strip_terminal_controls(text: str) -> str:
    """`text` without escape sequences, control or bidi characters (newline, tab are kept)."""
    if not _CONTROLS.search(text):
        return text  # the common case: nothing to do, no copy
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


def clean_line(text: str) -> str:
    """A one-line field (a name, a model id, a title): safe, and on one line."""
    return _WHITE_SPACE.sub(" ", strip_terminal_controls(text)).strip()
