"""The records byok-tui keeps and shows: bots, conversations, messages, and the state of each
provider's key, as plain data.

A leaf every layer may read (the database fills them, screens show them); nothing here does
I/O or imports another part of byok-tui (but for type names). A `Bot` carries whether it has a
key of its own, never the key; a `KeyStatus` the key masked, never whole.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Literal

# The keys' records the first frame shows, a module of their own so that it loads only them
# (each frozen dataclass takes ~0.5 ms to make); here too, as every layer reads them from here.
from byok_tui.core.key_records import KeyOverview, KeySource, KeyStatus, LabelledKey

__all__ = ["KeyHealth", "KeyOverview", "KeySource", "KeyStatus", "LabelledKey"]


# The longest wait a provider's word is taken for: a header saying "inf" or 1e309 must not
# cool a key, or hold a send, for ever (nor overflow what shows the wait).
LONGEST_WAIT = 86_400.0


@dataclass(frozen=True, slots=True)
class KeyHealth:
    """What the answers a key got said of it (see storage/key_health.py)."""

    name: str  # default, a label, per-bot, or an environment variable
    fingerprint: str  # a hash that tells keys apart; never the key
    state: str  # ok, invalid, no credit, cooling, unknown
    until: float | None  # cooling until this Unix time
    checked: float | None  # when an answer last said something of the key
    last_used: float

    def usable(self, now: float) -> bool:
        """Whether failover may send it: not invalid, not out of credit, not cooling."""
        if self.state == "cooling":
            return self.until is None or self.until <= now
        return self.state not in ("invalid", "no credit")

    def describe(self, now: float) -> str:
        if self.state == "cooling":
            if self.until is not None and self.until > now:
                return f"cooling for {math.ceil(self.until - now)} s"
            return "ok (was rate-limited)"
        return {"invalid": "invalid (401)", "unknown": "not checked"}.get(self.state, self.state)


# A reply is 'partial' from its first byte until it completes, so that a process killed
# mid-stream leaves it marked partial with no recovery step.
MessageStatus = Literal["complete", "partial", "error"]


@dataclass(frozen=True, slots=True)
class BotConfig:
    """A bot's shareable configuration: everything but the per-bot key. The fields are in the
    order of the bots table's columns (storage/store.py `bot_values`)."""

    name: str
    provider: str
    model: str
    system_prompt: str = ""
    temperature: float | None = None
    max_tokens: int = 4096
    # `provider:model`, in order: asked when the provider cannot answer (fallbacks.py).
    fallbacks: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Bot:
    id: int
    uuid: str
    config: BotConfig
    has_key: bool  # a per-bot key for the provider the bot uses now
    kept_key_for: str | None = None  # the provider a per-bot key was set under, if any
    # Instead of a key of its own: the command that prints it, or a labelled provider key
    # (for the provider the bot uses now; None when set under another).
    key_command: str | None = None
    key_label: str | None = None

    @property
    def name(self) -> str:
        return self.config.name


@dataclass(frozen=True, slots=True)
class Conversation:
    id: int
    uuid: str
    bot_id: int
    title: str
    created: float
    updated: float
    # `provider:model` its next messages go to (a compare's reply kept); None: the bot's.
    continues_on: str | None = None

    def config_for(self, bot: BotConfig) -> BotConfig:
        """What its next message is sent with: the bot's configuration, on the provider and
        model of a compare's reply kept in it, with no fallbacks (the user chose that
        model), or the bot's own."""
        if not self.continues_on:
            return bot
        provider, _, model = self.continues_on.partition(":")
        return replace(bot, provider=provider, model=model, fallbacks=())


@dataclass(frozen=True, slots=True)
class Message:
    id: int
    uuid: str
    conversation_id: int
    role: Literal["user", "assistant"]
    content: str
    reasoning: str
    provider: str | None
    model: str | None
    key_source: str | None
    status: MessageStatus
    error_kind: str | None
    error_message: str | None
    input_tokens: int | None
    output_tokens: int | None
    created: float
    cached_input_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None  # None: not known (see price)
    price: str | None = None  # the price the cost was worked out with, or why there is none
    fallback: bool = False  # answered by one of the bot's fallbacks, not its own provider
    parent_id: int | None = None  # the message this one follows (None: the first)


@dataclass(frozen=True, slots=True)
class Draft:
    """What a composer held, not sent: its text and the files attached to it, by path."""

    text: str = ""
    files: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.text or self.files)


@dataclass(frozen=True, slots=True)
class ShownToolCall:
    """A tool call a stored reply made, as the transcript shows it (outside text, cleaned
    when it was stored or imported)."""

    name: str
    arguments: str
    result: str
    error: bool


@dataclass(frozen=True, slots=True)
class TranscriptPage:
    """Messages of a conversation's branch on screen, in order, read a page at a time."""

    messages: list[Message]
    # Message id → (its place, how many) for those with alternatives (edits, regenerations).
    alternatives: dict[int, tuple[int, int]]
    # Message id → the files it carries, named (`notes.md · 2 KB`), for those that have some.
    attached: dict[int, list[str]]
    earlier: bool  # the branch has older messages than these
    later: bool = False  # and newer ones (a stretch around a message found far back)
    # Reply id → the tool calls it made, in order, for those that made any.
    tool_calls: dict[int, list[ShownToolCall]] = field(default_factory=dict)

    @classmethod
    def empty(cls, *, earlier: bool = False) -> TranscriptPage:
        """No messages (a new conversation, or a read that failed)."""
        return cls([], {}, {}, earlier=earlier)


BudgetPeriod = Literal["day", "month"]
ALL_PROVIDERS = "all"  # a budget's scope when it caps the total across providers


# Where a search snippet's match begins and ends (control characters: stored text never
# holds them, so they cannot be confused with the text).
MATCH_START, MATCH_END = "\x02", "\x03"


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A message (or a conversation's title: `message_id` None, `role` "title") that matched
    a search. `snippet` is one line around the match, each match between MATCH_START and
    MATCH_END."""

    conversation_id: int
    title: str
    bot_id: int
    bot_name: str
    message_id: int | None
    role: str
    created: float
    snippet: str


@dataclass(frozen=True, slots=True)
class Budget:
    scope: str  # a provider id, or ALL_PROVIDERS
    amount_usd: float
    per: BudgetPeriod


def budget_amount(text: str) -> float:
    """A budget typed by a person (`5`, `$0.25`): US dollars, 0 or more, sub-cent precision
    kept. ValueError says what is wrong with it."""
    try:
        amount = float(text.strip().lstrip("$").replace(",", ""))
    except ValueError:
        raise ValueError(f"not an amount in US dollars: {text.strip()!r}") from None
    if not math.isfinite(amount) or amount < 0:
        raise ValueError(f"a budget is 0 or more US dollars, not {text.strip()!r}")
    return amount


@dataclass(frozen=True, slots=True)
class Spend:
    """What the bot's provider cost today and this month, and its budgets, in words."""

    provider_id: str
    today: float
    month: float
    budgets: tuple[str, ...]  # `⚠ Budget: $4.10 of $5.00 this month for openai`, one each
    warning: bool  # a budget is near or reached
    month_by_key: tuple[tuple[str, float], ...] = ()  # (key source, this month's spend)
    free_tier: str | None = None  # what is left of the model's free requests today, in words
    free_tier_near: bool = False  # those free requests are nearly or all used


@dataclass(frozen=True, slots=True)
class Cost:
    """What a reply cost, and the price it was worked out with."""

    usd: float | None  # None: not known (no price for the model, or no token counts)
    price: str  # the price it was worked out with and where that came from, or why none
