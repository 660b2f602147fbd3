"""Failover between a provider's keys, when the user turned it on for that provider.

A request refused with 401, 402, 429 or `insufficient_quota` before any text arrived is sent
once with each other usable key of the provider, in order (the default key, then the labelled
keys as they were added); never on a 400, a 403 or a content refusal, which no other key
mends. A key its answers left invalid, out of credit or cooling is skipped (an invalid one
until it is changed). A conversation stays on the key that last answered it: prompt caches are
kept per key. No Textual here: the app and `byok-tui ask` both use it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from byok_tui.core.errors import ByokError, ErrorKind
from byok_tui.core.records import KeyHealth, KeySource, Message
from byok_tui.core.registry import Provider
from byok_tui.keys import ResolvedKey
from byok_tui.keys.base import fingerprint
from byok_tui.providers.errors import ProviderError

FAILOVER_STATUSES = (401, 402, 429)


@dataclass(frozen=True, slots=True)
class KeyFailedOver:
    """The request went out again with another key: what happened, in one line, and the key
    now used (its source, for the reply's line)."""

    notice: str
    key: ResolvedKey


def key_words(key: ResolvedKey) -> str:
    """A key named as notices name it: `key work`, `default key`, `per-bot key`."""
    if key.source is KeySource.LABELLED:
        return f"key {key.label}"
    if key.source is KeySource.ENVIRONMENT:
        return f"key from {key.origin}"
    return {KeySource.GLOBAL: "default key"}.get(key.source, f"{key.source.value} key")


def fails_over(error: ByokError) -> bool:
    """Whether another key might be answered where this one was refused."""
    return isinstance(error, ProviderError) and error.status in FAILOVER_STATUSES


def what_went_wrong(error: ByokError) -> str:
    if isinstance(error, ProviderError) and error.status == 401:
        return "invalid (401)"
    if error.kind is ErrorKind.BILLING:
        return "no credit"
    return "rate-limited"


def last_answering_key(messages: Sequence[Message]) -> str | None:
    """The key source of the conversation's last complete reply."""
    for message in reversed(messages):
        if message.role == "assistant" and message.status == "complete" and message.key_source:
            return message.key_source
    return None


class KeyOrder:
    """The keys one send may use, in the order it uses them, and why any was passed over."""

    def __init__(
        self,
        provider: Provider,
        first: ResolvedKey,
        others: Sequence[ResolvedKey],
        health: Sequence[KeyHealth],
        *,
        stay_on: str | None = None,
        now: float | None = None,
    ) -> None:
        self.provider = provider
        self._now = time.time() if now is None else now
        self._health = {h.fingerprint: h for h in health}
        keys = [first, *(k for k in others if k.source_text != first.source_text)]
        staying = [k for k in keys if stay_on is not None and k.source_text == stay_on]
        self.keys = staying + [k for k in keys if k not in staying]
        self.notices: list[str] = []

    def usable(self, key: ResolvedKey) -> bool:
        """False, with a notice, for a key whose last answers say it would be refused."""
        found = self._health.get(fingerprint(key.value))
        if found is None or found.usable(self._now):
            return True
        self.notices.append(
            f"{self.provider.id} {key_words(key)}: skipped ({found.describe(self._now)})"
        )
        return False
