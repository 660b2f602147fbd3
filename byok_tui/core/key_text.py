"""A key as text: trimmed of what rides along when it is copied, and refused if anything else
in it is not printable ASCII (an HTTP header cannot carry it, and it is never part of a key).

Pure text, no I/O: the key store, the CLI and the key fields all apply the same rule. No
message ever holds the key, only where the offending character is and what it is.
"""

from __future__ import annotations

import unicodedata

from byok_tui.core.errors import ByokError

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


def describe_character(character: str) -> str:
    """What a character that cannot be in a key is, in words ('an invisible U+200B')."""
    code = f"U+{ord(character):04X}"
    category = unicodedata.category(character)
    if character == " ":
        return "a space"
    if character in "\n\r\u2028\u2029":
        return "a line break"
    if character == "\t":
        return "a tab"
    if character == "\u00a0":
        return f"a non-breaking space {code}"
    if character.isspace():
        return f"a space character {code}"
    if character in INVISIBLE or category == "Cf":
        return f"an invisible {code}"
    if category.startswith("C"):
        return f"a control character {code}"
    name = unicodedata.name(character, "")
    return f"a non-ASCII character {character!r} ({code}{' ' + name if name else ''})"


def first_bad_character(key: str) -> tuple[int, str] | None:
    """(1-based position, description) of the first character that cannot be in a key."""
    for position, character in enumerate(key, start=1):
        if not "!" <= character <= "~":
            return position, describe_character(character)
    return None


class KeyCharacterError(ByokError):
    """A key given to be saved holds a character no key has; nothing was saved."""

    def __init__(self, position: int, described: str) -> None:
        self.position, self.described = position, described
        super().__init__(
            f"The key was not saved: character {position} is {described}; copy the key again",
            remedy="A key is printable ASCII only; copy it again from the provider's console.",
        )


def check_key(raw: str) -> str:
    """The key as it is saved: trimmed (see normalize_key), every character left printable
    ASCII; KeyCharacterError otherwise. "" stays "" (an empty value removes a key)."""
    key = normalize_key(raw)
    bad = first_bad_character(key)
    if bad is not None:
        raise KeyCharacterError(*bad)
    return key
