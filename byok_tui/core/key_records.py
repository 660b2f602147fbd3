"""The state of each provider's key, as plain data: what the first frame shows (and loads alone,
before byok_tui.core.records).

A leaf: nothing here does I/O or imports another part of byok-tui (but for type names). A
`KeyStatus` carries the key masked, never whole.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from byok_tui.core.errors import ByokError


# The origin of KeySource.NONE for a provider of the user's own that takes no key at all
# (as against one whose key is optional, called without it).
TAKES_NO_KEY = "takes no key"


class KeySource(StrEnum):
    PER_BOT = "per-bot"
    GLOBAL = "global"
    LABELLED = "labelled"
    ENVIRONMENT = "environment"
    LOCAL_RUNTIME = "local runtime"
    NONE = "no key"  # a provider whose key is optional, called without one


# A NamedTuple, not a dataclass: its module loads before the first frame (launch.py says why).
class KeyStatus(NamedTuple):
    provider_id: str
    display_name: str
    entry: str | None  # None for a local runtime, which has no entry
    stored: bool
    source: KeySource | None  # what a call would use now; None when there is no key
    origin: str
    masked: str  # "" when there is no key
    unusable: str | None = None  # why the key found cannot be sent (a character no key has)
    program: str = ""  # the default key comes from a command running this program
    fingerprint: str | None = None  # of the key found, when it is known without running

    def describe(self) -> str:
        if self.unusable is not None:
            return "invalid key (paste it again)"
        if self.source is None:
            return "no key"
        if self.source is KeySource.LOCAL_RUNTIME:
            return "local runtime, no key"
        if self.source is KeySource.NONE:
            return "no key needed" if self.origin == TAKES_NO_KEY else "no key (optional)"
        if self.source is KeySource.ENVIRONMENT:
            return f"environment ({self.origin})"
        if self.program:
            return f"global key from command {self.program}"
        return "global key"


class LabelledKey(NamedTuple):
    """A provider's key beside its default one, as a listing shows it."""

    provider_id: str
    label: str
    entry: str
    masked: str  # "" when it comes from a command, or its entry is empty
    program: str = ""  # it comes from a command running this program
    command: str = ""
    fingerprint: str | None = None  # of the stored key


class KeyOverview(NamedTuple):
    statuses: tuple[KeyStatus, ...]
    location: str
    error: ByokError | None  # set when the stored keys could not be read
    notices: tuple[str, ...]
    labelled: tuple[LabelledKey, ...] = ()
    failover: tuple[str, ...] = ()  # providers whose failover between keys is on
    commands: tuple[tuple[str, str], ...] = ()  # (provider id, its default key's command)
