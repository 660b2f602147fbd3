"""What goes into a chat call and what comes out of it: plain data, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from byok_tui.core.sanitize import clean_line, strip_terminal_controls

Role = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class Image:
    """A picture sent with a message, as its bytes and their type."""

    media_type: str  # image/png, image/jpeg, image/webp or image/gif
    data: bytes = field(repr=False)

    @property
    def base64(self) -> str:
        import base64

        return base64.b64encode(self.data).decode("ascii")

    @property
    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.base64}"


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool a model may call: its name, what it does, and the JSON Schema of its arguments
    (an object). Its description came from a tool server: outside text."""

    name: str
    description: str
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call a model asked for, assembled whole from its stream. `arguments` is None when
    they are not a JSON object; `problem` says why the call cannot be run as asked (bad JSON,
    an unknown tool, arguments its schema refuses): the model is told, nothing is run."""

    id: str
    name: str
    raw_arguments: str
    arguments: dict[str, Any] | None = None
    problem: str | None = None
    signature: str | None = None  # what the provider asks to be sent back with it (Gemini)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a call gave back (or why it gave nothing), sent to the model in the next turn."""

    call_id: str
    name: str
    content: str
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: Role
    content: str
    images: tuple[Image, ...] = ()  # sent in each family's own image format
    # An assistant turn that asked for tools, and the user-side turn that answers them.
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()


@dataclass(frozen=True, slots=True)
class ChatRequest:
    model: str
    messages: tuple[ChatMessage, ...]
    system: str | None = None
    temperature: float | None = None
    max_tokens: int = 4096
    # The last message is a reply that was cut short (stopped, cut, or at the length limit),
    # to be continued from where it stopped rather than answered.
    continues: bool = False
    tools: tuple[ToolSpec, ...] = ()  # offered to the model (see `offered_tools`)


def offered_tools(chat: ChatRequest, takes_tools: bool | None) -> tuple[ToolSpec, ...]:
    """The tools sent with `chat`: none to a model the registry says takes none; to one it
    does not know (a model discovered from a list), sent, and the provider says if not."""
    return () if takes_tools is False else chat.tools


@dataclass(frozen=True, slots=True)
class TextDelta:
    """Reply text. Made terminal-safe when created: it came from the network."""

    text: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", strip_terminal_controls(self.text))


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", strip_terminal_controls(self.text))


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens a reply was billed for, as the provider reported them (None: not reported)."""

    input_tokens: int | None = None  # all input, including what was read from or written to a cache
    output_tokens: int | None = None  # all output, including reasoning
    reasoning_tokens: int | None = None  # of the output, what the model thought
    cached_input_tokens: int | None = None  # of the input, what was read from a cache
    cache_write_tokens: int | None = None  # of the input, what was written to a cache


# What each family says when a reply stopped at the length limit (max tokens) rather than
# at its natural end: OpenAI-compatible and Ollama, Anthropic, Gemini.
LENGTH_LIMIT_REASONS = frozenset({"length", "max_tokens", "MAX_TOKENS"})


@dataclass(frozen=True, slots=True)
class Done:
    finish_reason: str

    @property
    def at_length_limit(self) -> bool:
        """The reply stopped because it reached the length limit: it can be continued."""
        return self.finish_reason in LENGTH_LIMIT_REASONS


@dataclass(frozen=True, slots=True)
class RateLimitWait:
    """The client is pacing itself to a known requests-per-minute limit before sending."""

    seconds: float
    requests_per_minute: int


@dataclass(frozen=True, slots=True)
class ToolCalls:
    """The tools a reply asked for, each call whole, before its Done (finish: tool calls)."""

    calls: tuple[ToolCall, ...]


StreamEvent = TextDelta | ReasoningDelta | Usage | Done | RateLimitWait | ToolCalls


@dataclass(frozen=True, slots=True)
class ListedModel:
    """A model as a provider's model-list endpoint describes it. Its names are made
    terminal-safe and one line when created: they came from the network (or its cache)."""

    id: str
    display_name: str
    free: bool = False
    context_length: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", clean_line(self.id))
        object.__setattr__(self, "display_name", clean_line(self.display_name))


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request as it ended, for the request log: never the key, a body or a query."""

    started: float  # Unix time
    provider: str
    purpose: str  # chat, models, key test, balance, probe
    method: str
    host: str
    path: str  # without the query string (Gemini's carries the key)
    key_source: str  # global, key work, per-bot, environment, local runtime, no key
    key_last4: str | None  # the key's last four characters; None when no key went
    model: str | None = None
    status: int | None = None  # None: no answer came
    outcome: str = "ok"  # ok, stopped, or the error's kind
    duration_s: float = 0.0
    usage: Usage | None = None
    # Which of the provider's keys went (`default`, a label...), and its fingerprint (a hash
    # that tells keys apart, never the key): what the key's health is kept under.
    key_name: str | None = None
    key_fingerprint: str | None = None
    retry_after: float | None = None  # the wait a 429 stated
