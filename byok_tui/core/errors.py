"""Errors the user sees: each says what happened and what to do about it (its remedy).

Every message is redacted when the error is made, and again wherever it is shown.
"""

from __future__ import annotations

from enum import StrEnum

from byok_tui.core.redaction import redact
from byok_tui.core.sanitize import strip_terminal_controls


class ErrorKind(StrEnum):
    NO_KEY = "no_key"
    AUTH = "auth"
    PERMISSION = "permission"
    RATE_LIMIT = "rate_limit"
    BILLING = "billing"
    NOT_FOUND = "not_found"
    BAD_REQUEST = "bad_request"
    TOO_LARGE = "too_large"
    OVERLOADED = "overloaded"
    NETWORK = "network"
    TIMEOUT = "timeout"
    PROTOCOL = "protocol"
    TRUNCATED = "truncated"
    KEY_STORE = "key_store"
    STORAGE = "storage"  # the database
    CONFIG = "config"
    USAGE = "usage"
    BUDGET = "budget"  # a spending cap the user set was reached: nothing was sent


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
    ErrorKind.NOT_FOUND: (
        "Check the model id: `byok-tui models --refresh` lists the models your key can use."
    ),
    ErrorKind.BAD_REQUEST: "The provider refused the request; its own message says why.",
    ErrorKind.TOO_LARGE: "Shorten the prompt or the conversation.",
    ErrorKind.OVERLOADED: "The provider is overloaded or failing: retry in a little while.",
    ErrorKind.NETWORK: "Check your network connection and the provider's address.",
    ErrorKind.TIMEOUT: "The provider stopped answering: retry, or allow more time (--timeout).",
    ErrorKind.PROTOCOL: (
        "Something other than the provider's API answered (a proxy, a captive portal or a "
        "wrong base URL): check the address and your network."
    ),
    ErrorKind.TRUNCATED: "The reply was cut off; what arrived is kept. Retry for the rest.",
    ErrorKind.CONFIG: "Fix the setting named above.",
    ErrorKind.KEY_STORE: "Fix or move the file named above; byok-tui has not changed it.",
    ErrorKind.STORAGE: "Fix or move the file named above; byok-tui has not changed it.",
    ErrorKind.USAGE: "Run with --help to see the valid forms.",
    ErrorKind.BUDGET: (
        "Send anyway to go over it this once, raise it (`byok-tui budget set`), or wait for "
        "the next period."
    ),
}


class ByokError(Exception):
    """An error with a kind, a short message and a remedy; never carries a key."""

    kind: ErrorKind = ErrorKind.USAGE

    def __init__(self, message: str, *, remedy: str | None = None) -> None:
        self.message = strip_terminal_controls(redact(message))
        self.remedy = strip_terminal_controls(
            redact(remedy if remedy is not None else REMEDIES[self.kind])
        )
        super().__init__(self.message)

    def one_line(self) -> str:
        """The error as one line: what happened and what to do, white space collapsed (a
        provider's message may hold new lines)."""
        return as_one_line(
            redact(f"{self.message}. {self.remedy}" if self.remedy else self.message)
        )


def as_one_line(text: str) -> str:
    return " ".join(text.split())
