"""Untrusted text made safe for a terminal.

Model output and provider error bodies come from the network. Terminal escape sequences in them
(ANSI colours, OSC 52 clipboard writes, OSC 8 links, title changes, DCS) must never reach the
terminal raw, so every escape sequence and every other control character is removed, except
newline and tab. Printable text, Unicode included, is untouched. Never imports Textual.
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
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_terminal_controls(text: str) -> str:
    """`text` without escape sequences or control characters (newline and tab are kept)."""
    if not _CONTROLS.search(text):
        return text  # the common case: nothing to do, no copy
    return _CONTROLS.sub("", _ESCAPES.sub("", text))
