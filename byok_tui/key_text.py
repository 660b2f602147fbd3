"""A key as text: what a pasted key is cleaned of before it is shown or saved.

Pure text, no I/O: the key store, the CLI and the key fields all trim a key the same way.
"""

from __future__ import annotations

# Characters that are never part of a key but ride along when one is copied: zero-width
# spaces and joiners, the word joiner and the byte-order mark (plus all Unicode white space).
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff"


def normalize_key(raw: str) -> str:
    """Strip surrounding white space and invisible characters; change nothing else."""
    start, end = 0, len(raw)
    while start < end and (raw[start].isspace() or raw[start] in INVISIBLE):
        start += 1
    while end > start and (raw[end - 1].isspace() or raw[end - 1] in INVISIBLE):
        end -= 1
    return raw[start:end]
