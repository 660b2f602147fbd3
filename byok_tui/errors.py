"""Errors the user sees, each with the seed's remedy (seed section 7).

Every message is redacted when the error is made, and again wherever it is shown.
"""

from __future__ import annotations

from enum import StrEnum

from byok_tui.redaction import redact


class ErrorKind(StrEnum):
    NO_KEY = "no_key"
    AUTH = "auth"
    PERMISSION = "permission"
    RATE_LIMIT = "rate_limit"
    BILLING = "billing"
    KEY_STORE = "key_store"
    USAGE = "usage"


REMEDIES: dict[ErrorKind, str] = {
    ErrorKind.NO_KEY: (
        "Enter a key for the correct provider; check that the provider selected matches the "
        "key you set; re-paste the key if the clipboard was altered."
    ),
    ErrorKind.AUTH: (
        "The key is invalid, revoked or expired: regenerate it in the provider's console."
    ),
    ErrorKind.PERMISSION: "The key lacks permission for this model: use a key that has it.",
    ErrorKind.RATE_LIMIT: (
        "Wait about a minute and retry; raise your usage tier; free-tier limits are lower."
    ),
    ErrorKind.BILLING: "Add credits, or switch to a free-tier model.",
    ErrorKind.KEY_STORE: "Fix or move the file named above; byok-tui has not changed it.",
    ErrorKind.USAGE: "Run with --help to see the valid forms.",
}


class ByokError(Exception):
    """An error with a kind, a short message and a remedy; never carries a key."""

    kind: ErrorKind = ErrorKind.USAGE

    def __init__(self, message: str, *, remedy: str | None = None) -> None:
        self.message = redact(message)
        self.remedy = redact(remedy if remedy is not None else REMEDIES[self.kind])
        super().__init__(self.message)

    def one_line(self) -> str:
        return redact(f"{self.message}. {self.remedy}" if self.remedy else self.message)
