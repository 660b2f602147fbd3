"""Redaction: the layer every log record and every shown error message passes through.

It removes any key the process has seen (stored, per-bot or environment keys register
themselves with `remember_secret`), anything shaped like a known provider key, `key=` query
parameters, and the values of key-bearing headers, replacing each with `[REDACTED]`.

A remembered key is found in every form text can show it in (as it is, repr- and JSON-escaped,
URL-encoded), and so is any run of PIECE or more of its consecutive characters: a key cut
short (an error message shortened to fit) is still a key. Redact first, then shorten.

Never logs, and never keeps a key anywhere but in the in-memory sets of secrets to remove.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from functools import cache
from typing import NamedTuple
from urllib.parse import quote, quote_plus

REDACTED = "[REDACTED]"

# Shorter remembered values are not redacted as literals: removing every "abc" from all text
# would destroy messages. Real keys are far longer; short ones are still caught by shape.
MIN_SECRET_LENGTH = 6

# Consecutive characters of a remembered key that count as the key: no 12-character run of a
# random key turns up in other text, and a key cut anywhere leaves at least this much of it.
PIECE = 12

# Bounded re-scans: a replacement can, in theory, combine with its neighbours into a new match.
_MAX_PASSES = 8


def _forms(secret: str) -> set[str]:
    """The ways text shows a key: as it is, in a repr or exception, in JSON, in a URL."""
    return {
        secret,
        repr(secret)[1:-1],
        secret.encode("unicode_escape").decode("ascii"),
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        quote(secret, safe=""),
        quote_plus(secret),
    }


# A NamedTuple, not a dataclass: its module loads before the first frame (launch.py says why).
class _Compiled(NamedTuple):
    literal: re.Pattern[str]  # every form of every key, longest first
    runs: re.Pattern[str] | None  # runs of PIECE or more characters that keys are made of

    def __repr__(self) -> str:
        return "_Compiled(<patterns of the keys, not shown>)"  # they spell every key out


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
    from byok_tui.core.registry import providers

    shapes = [p.key_pattern for p in providers() if p.key_pattern]
    if not shapes:
        return None
    return re.compile("|".join(f"(?:{shape})" for shape in shapes))


class Redactor:
    """Holds the secrets to remove; thread-safe because workers log from threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._secrets: set[str] = set()  # every form of every remembered key
        self._pieces: set[str] = set()  # every PIECE-long run of those forms
        self._joined = ""  # every form, NUL-separated: is a short text part of a key?
        self._compiled: _Compiled | None = None  # None: compile when next needed

    def remember(self, secret: str | None) -> None:
        if not secret or len(secret) < MIN_SECRET_LENGTH:
            return
        forms = _forms(secret)
        with self._lock:
            if forms <= self._secrets:
                return
            self._secrets |= forms
            self._joined = "\0".join(sorted(self._secrets))
            for form in forms:
                self._pieces.update(form[i : i + PIECE] for i in range(len(form) - PIECE + 1))
            self._compiled = None  # compiled once when next needed, not once per key

    def forget_all(self) -> None:
        with self._lock:
            self._secrets.clear()
            self._pieces.clear()
            self._joined = ""
            self._compiled = None

    @property
    def _patterns(self) -> _Compiled | None:
        with self._lock:
            if self._compiled is None and self._secrets:
                ordered = sorted(self._secrets, key=len, reverse=True)
                literal = re.compile("|".join(re.escape(s) for s in ordered))
                alphabet = "".join(sorted({c for piece in self._pieces for c in piece}))
                runs = re.compile(f"[{re.escape(alphabet)}]{{{PIECE},}}") if alphabet else None
                self._compiled = _Compiled(literal, runs)
            return self._compiled

    def could_continue_a_key(self, text: str) -> int:
        """How many characters at the end of `text` (fewer than PIECE) could be the start of
        a remembered key, or of a run of it, that more text would complete."""
        joined = self._joined
        for length in range(min(PIECE - 1, len(text)), 0, -1):
            if text[-length:] in joined:
                return length
        return 0

    def _known_spans(self, text: str) -> list[tuple[int, int]]:
        """Where remembered keys, or runs of PIECE of their characters, are in `text`."""
        patterns = self._patterns
        if patterns is None:
            return []
        spans = [match.span() for match in patterns.literal.finditer(text)]
        if patterns.runs is not None:
            pieces = self._pieces
            for run in patterns.runs.finditer(text):
                base, found = run.start(), run.group()
                for i in range(len(found) - PIECE + 1):
                    if found[i : i + PIECE] in pieces:
                        spans.append((base + i, base + i + PIECE))
        return _merged(spans)

    def holds_known(self, text: str) -> bool:
        """Whether `text` holds a remembered key (in any form) or a piece of one."""
        return bool(self._known_spans(text))

    def _without_known(self, text: str) -> str:
        spans = self._known_spans(text)
        if not spans:
            return text
        parts, last = [], 0
        for start, end in spans:
            parts += [text[last:start], REDACTED]
            last = end
        parts.append(text[last:])
        return "".join(parts)

    def redact_known(self, text: str) -> str:
        """Only the remembered keys (and pieces of them): for user content (exports), where
        a key-shaped string the user wrote on purpose must survive but their own keys must
        not."""
        return _until_stable(self._without_known, text)

    def _one_pass(self, text: str) -> str:
        text = self._without_known(text)
        shape = _shape_pattern()
        if shape is not None:
            text = shape.sub(REDACTED, text)
        for pattern, replacement in _context_patterns():
            text = pattern.sub(replacement, text)
        return text

    def redact(self, text: str) -> str:
        return _until_stable(self._one_pass, text)


def _until_stable(one_pass: Callable[[str], str], text: str) -> str:
    """Apply `one_pass` until the text stops changing: a replacement can, in theory, combine
    with its neighbours into a new match."""
    for _ in range(_MAX_PASSES):
        redacted = one_pass(text)
        if redacted == text:
            return text
        text = redacted
    # Pathological input that keeps re-forming a secret: show nothing rather than leak.
    return REDACTED


class StreamRedactor:
    """Remembered keys removed from text that arrives in pieces (a streamed reply): a key cut
    across two pieces is still found. Holds back only what could still become a key: a
    key reaching the end of what arrived, or a short tail that occurs inside one."""

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, text: str) -> str:
        """What of the text so far can be shown now, keys replaced."""
        pending = self._pending + text
        cut = len(pending) - _REDACTOR.could_continue_a_key(pending)
        for start, end in _REDACTOR._known_spans(pending):
            if end == len(pending):  # the key may go on in the next piece: hold all of it
                cut = min(cut, start)
            elif start < cut < end:  # a key found whole: out in one piece, never split
                cut = end
        self._pending = pending[cut:]
        return _REDACTOR.redact_known(pending[:cut]) if cut else ""

    def flush(self) -> str:
        """The rest, at the end of the stream."""
        rest, self._pending = self._pending, ""
        return _REDACTOR.redact_known(rest)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


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
    """`text` with every remembered key (and piece of one) and anything shaped like a
    provider's key replaced, and nothing else changed: for text derived from what the user
    wrote (titles) and for everything that leaves byok-tui (exports, share links, the
    clipboard), which may hold a key deleted from the store since, or never stored."""
    text = _REDACTOR.redact_known(text)
    shape = _shape_pattern()
    return shape.sub(REDACTED, text) if shape is not None else text


def secrets_in(text: str) -> list[str]:
    """What in `text` looks like a key, in words (never the key): for holding a prompt that
    would send one of the user's keys, or anything shaped like a provider's key, to a model."""
    from byok_tui.core.registry import key_providers

    found = []
    if _REDACTOR.holds_known(text):
        found.append("one of your API keys")
    for provider in key_providers():
        if provider.key_pattern and re.search(provider.key_pattern, text):
            article = "an" if provider.display_name[:1].upper() in "AEIOU" else "a"
            found.append(f"something shaped like {article} {provider.display_name} key")
    return found


# A run this long of letters and digits, with upper case, lower case and digits all in it, is a
# key, not a model id: model ids are words joined by '-', '.', '/' or ':' (gpt-5.5,
# Llama-3.3-70B-Instruct, qwen2.5-coder:32b), far shorter between separators.
_KEYLIKE_RUN = re.compile(r"[A-Za-z0-9]{24,}")


def model_id_problem(model: str) -> str | None:
    """Why `model` cannot be a model id, or None. A model id is sent to the provider and
    stored in clear, so one that holds one of the user's keys, or anything shaped like a key,
    is refused (the message never shows it)."""
    runs = _KEYLIKE_RUN.findall(model)
    mixed = any(
        any(c.isupper() for c in r) and any(c.islower() for c in r) and any(c.isdigit() for c in r)
        for r in runs
    )
    if not secrets_in(model) and not mixed:
        return None
    return (
        "That model id looks like an API key; it was not saved or sent. Paste a key in an API "
        "key field, and choose the model from the list (or type its id, like gpt-5.5)"
    )


# Every provider's key is one unbroken run of at least this many of these characters.
_KEY_RUN = re.compile(r"[A-Za-z0-9_\-.:+/=]{20,}")


def could_hold_a_key(text: str) -> bool:
    """Whether `text` has a run of characters long enough to be a key (of any shape): most
    prose has none, and then a key store that answers slowly (a keyring) need not be read."""
    return _KEY_RUN.search(text) is not None


def forget_secrets() -> None:
    """Drop all remembered secrets (tests use this to start from a clean state)."""
    _REDACTOR.forget_all()
