"""Providers answered from a queue, above the wire: for screen tests, which need no socket.

Like llm's `MockModel`: a test enqueues what the next replies bring, runs the app with
`make_app(backend=fake)`, and reads what was asked in `fake.requests`. Keys are resolved by the
real client (which key a request would carry is part of what the screens show); only the HTTP
call is replaced. What the wire does with a request (headers, SSE, disconnects) is tested
against loopback servers in tests/providers/ and tests/security/.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field

from byok_tui.app_services.services import Services
from byok_tui.core.errors import ByokError
from byok_tui.core.records import KeySource
from byok_tui.core.registry import Provider
from byok_tui.keys import ResolvedKey
from byok_tui.keys.resolve import BotKeyChoice
from byok_tui.providers.client import ProviderClient
from byok_tui.providers.errors import check_settings
from byok_tui.providers.types import (
    ChatRequest,
    Done,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    Usage,
)


@dataclass
class FakeReply:
    """What one request gets: pieces of text after `pause` seconds each, then the end, or
    `error` (raised where the wire would raise it), or nothing more (`finish=False`: the
    stream stays open until the request is stopped). `held`: after the end the stream stays
    open until stopped, as the client reading the rest of a body held open after it."""

    pieces: tuple[str, ...]
    reasoning: tuple[str, ...] = ()
    pause: float = 0.0
    finish: bool = True
    error: ByokError | None = None
    finish_reason: str = "stop"  # `length`: it stopped at the length limit
    held: bool = False


@dataclass(frozen=True)
class FakeRequest:
    """A request as it would have gone out (never the key itself: only where it came from)."""

    provider_id: str
    chat: ChatRequest
    key_source: KeySource

    @property
    def texts(self) -> list[str]:
        return [message.content for message in self.chat.messages]


@dataclass
class FakeProviders:
    """The queue of replies and the record of requests; call it to make the app's client."""

    replies: deque[FakeReply] = field(default_factory=deque)
    requests: list[FakeRequest] = field(default_factory=list)

    def enqueue(
        self,
        *pieces: str,
        reasoning: tuple[str, ...] = (),
        pause: float = 0.0,
        finish: bool = True,
        error: ByokError | None = None,
        finish_reason: str = "stop",
        held: bool = False,
    ) -> None:
        self.replies.append(FakeReply(pieces, reasoning, pause, finish, error, finish_reason, held))

    def __call__(self, services: Services) -> ProviderClient:
        return _FakeClient(self, services)


class _FakeClient(ProviderClient):
    def __init__(self, fake: FakeProviders, services: Services) -> None:
        super().__init__(services.keys, config=services.config, environ=services.environ)
        self._fake = fake

    async def stream_chat(
        self,
        provider: Provider,
        chat: ChatRequest,
        *,
        bot_key: str | None = None,
        key: ResolvedKey | None = None,
        on_sent: Callable[[], None] | None = None,
    ) -> AsyncGenerator[StreamEvent, None]:
        check_settings(provider, chat.temperature, chat.max_tokens)
        key = await self.key_for(provider, bot=BotKeyChoice(key=bot_key), key=key)
        if not self._fake.replies:
            raise AssertionError(f"a request to {provider.id} that no test reply was queued for")
        reply = self._fake.replies.popleft()
        self._fake.requests.append(FakeRequest(provider.id, chat, key.source))
        await asyncio.sleep(0)  # the request "goes out" on the next turn, as on a socket
        if on_sent is not None:
            on_sent()
        for piece in reply.reasoning:
            await asyncio.sleep(reply.pause)
            yield ReasoningDelta(piece)
        for piece in reply.pieces:
            await asyncio.sleep(reply.pause)
            yield TextDelta(piece)
        if reply.error is not None:
            raise reply.error
        if not reply.finish:
            await asyncio.Event().wait()  # open until stopped
        yield Usage(input_tokens=len(chat.messages), output_tokens=len(reply.pieces))
        yield Done(reply.finish_reason)
        if reply.held:
            await asyncio.Event().wait()  # open after its end until stopped
