"""Redaction: the layer every log record and every shown error message passes through.

It removes any key the process has seen (stored, per-bot or environment keys register
themselves with `remember_secret`), anything shaped like a known provider key, `key=` query
parameters, and the values of key-bearing headers, replacing each with `[REDACTED]`.

Never logs, and never keeps a key anywhere but in the in-memory set of secrets to remove.
"""

from __future__ import annotations

import re
import threading
from functools import cache
from urllib.parse import quote, quote_plus

REDACTED = "[REDACTED]"

# Shorter remembered values are not redacted as literals: removing every "abc" from all text
# would destroy messages. Real keys are far longer; short ones are still caught by shape.
MIN_SECRET_LENGTH = 6

# Bounded re-scans: a replacement can, in theory, combine with its neighbours into a new match.
_MAX_PASSES = 8


@cache
def _context_patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    # Compiled on first use: start-up (the first frame) registers keys but redacts nothing.
    return (
        # ?key=… / &key=… (the Gemini request URL), also percent- or JSON-escaped neighbours.
        (re.compile(r"([?&](?:api_?)?key=)[^&#\s\"'<>]+", re.IGNORECASE), r"\1" + REDACTED),
        (re.compile(r"(\bBearer\s+)[^\s\"',;]+", re.IGNORECASE), r"\1" + REDACTED),
        (
            re.compile(
                r"((?:x-api-key|x-goog-api-key|api[-_]?key|authorization)[\"']?\s*[:=]\s*[\"']?)"
                r"(?!Bearer\b)(?!\[REDACTED\])[^\s\"',;}]+",
                re.IGNORECASE,
            ),
            r"\1" + REDACTED,
        ),
    )


@cache
def _shape_pattern() -> re.Pattern[str] | None:
    from byok_tui.providers.registry import providers

    shapes = [p.key_pattern for p in providers() if p.key_pattern]
    if not shapes:
        return None
    return re.compile("|".join(f"(?:{shape})" for shape in shapes))


class Redactor:
    """Holds the secrets to remove; thread-safe because workers log from threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._secrets: set[str] = set()
        self._compiled: re.Pattern[str] | None = None  # None: compile when next needed

    def remember(self, secret: str | None) -> None:
        if not secret or len(secret) < MIN_SECRET_LENGTH:
            return
        variants = {secret, quote(secret, safe=""), quote_plus(secret)}
        with self._lock:
            if variants <= self._secrets:
                return
            self._secrets |= variants
            self._compiled = None  # compiled once when next needed, not once per key

    def forget_all(self) -> None:
        with self._lock:
            self._secrets.clear()
            self._compiled = None

    @property
    def _literal(self) -> re.Pattern[str] | None:
        """Every remembered secret, longest first, as one pattern (None when there are none)."""
        with self._lock:
            if self._compiled is None and self._secrets:
                ordered = sorted(self._secrets, key=len, reverse=True)
                self._compiled = re.compile("|".join(re.escape(s) for s in ordered))
            return self._compiled

    def redact_known(self, text: str) -> str:
        """Only the remembered keys, as literals: for user content (exports), where a
        key-shaped string the user wrote on purpose must survive but their own keys must not."""
        for _ in range(_MAX_PASSES):
            literal = self._literal
            if literal is None or not literal.search(text):
                return text
            text = literal.sub(REDACTED, text)
        return REDACTED

    def _one_pass(self, text: str) -> str:
        literal = self._literal
        if literal is not None:
            text = literal.sub(REDACTED, text)
        shape = _shape_pattern()
        if shape is not None:
            text = shape.sub(REDACTED, text)
        for pattern, replacement in _context_patterns():
            text = pattern.sub(replacement, text)
        return text

    def _still_secret(self, text: str) -> bool:
        literal = self._literal
        if literal is not None and literal.search(text):
            return True
        shape = _shape_pattern()
        return shape is not None and shape.search(text) is not None

    def redact(self, text: str) -> str:
        for _ in range(_MAX_PASSES):
            text = self._one_pass(text)
            if not self._still_secret(text):
                return text
        # Pathological input that keeps re-forming a secret: show nothing rather than leak.
        return REDACTED


_REDACTOR = Redactor()


def remember_secret(secret: str | None) -> None:
    """Register a key so that it is removed from every log line and shown message."""
    _REDACTOR.remember(secret)


def redact(text: str) -> str:
    """`text` with every known key, key-shaped string and key parameter replaced."""
    return _REDACTOR.redact(text)


def redact_known_secrets(text: str) -> str:
    """`text` with every remembered key replaced, and nothing else changed."""
    return _REDACTOR.redact_known(text)


def redact_keys(text: str) -> str:
    """`text` with every remembered key and anything shaped like a provider's key replaced,
    and nothing else changed: for text derived from what the user wrote (titles) and for
    exports, which may hold a key deleted from the store since, or never stored."""
    text = _REDACTOR.redact_known(text)
    shape = _shape_pattern()
    return shape.sub(REDACTED, text) if shape is not None else text


def secrets_in(text: str) -> list[str]:
    """What in `text` looks like a key, in words (never the key): for holding a prompt that
    would send one of the user's keys, or anything shaped like a provider's key, to a model."""
    from byok_tui.providers.registry import key_providers

    found = []
    literal = _REDACTOR._literal
    if literal is not None and literal.search(text):
        found.append("one of your API keys")
    for provider in key_providers():
        if provider.key_pattern and re.search(provider.key_pattern, text):
            article = "an" if provider.display_name[:1].upper() in "AEIOU" else "a"
            found.append(f"something shaped like {article} {provider.display_name} key")
    return found


def forget_secrets() -> None:
    """Drop all remembered secrets (tests use this to start from a clean state)."""
    _REDACTOR.forget_all()
