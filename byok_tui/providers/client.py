"""The provider client: one shared httpx.AsyncClient, used for every provider.

Resolves the key for every call (so a rotated key is used at once) before any network I/O,
sends it only to the provider's own endpoint in its documented place, never follows a
redirect, and turns every failure into a redacted ProviderError. httpx exceptions are never
re-raised or chained: their text holds the request URL, which for Gemini holds the key.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from byok_tui import __version__
from byok_tui.core.config import Config
from byok_tui.core.errors import ByokError
from byok_tui.core.records import KeySource
from byok_tui.core.registry import Provider, key_mismatch_warning
from byok_tui.keys import KeyStore, NoApiKeyError, ResolvedKey, resolve_key
from byok_tui.keys.base import fingerprint
from byok_tui.keys.command import KeyCommands
from byok_tui.keys.resolve import BotKeyChoice
from byok_tui.providers import endpoints
from byok_tui.providers.body import ResponseBody
from byok_tui.providers.errors import (
    ProviderError,
    check_settings,
)
from byok_tui.providers.limits import RateLimits, rate_limits, stated_in_error
from byok_tui.providers.pacing import RequestPacer
from byok_tui.providers.reading import (
    check_response,
    guard,
    network_error,
    read_body,
    timeout_error,
)
from byok_tui.providers.types import (
    ChatRequest,
    ListedModel,
    RateLimitWait,
    RequestRecord,
    StreamEvent,
    Usage,
)
from byok_tui.providers.wire import family
from byok_tui.providers.wire.common import HttpCall, carry_key, load_json

if TYPE_CHECKING:
    import httpx

    from byok_tui.providers.balance import Balance

log = logging.getLogger(__name__)

# A key shorter than this is not shown even in part in the request log: four characters of a
# short key would give too much of it away.
SHORTEST_KEY_SHOWN_IN_PART = 16


def last_four(key: str | None) -> str | None:
    """The last four characters of `key`, which tell keys apart in the request log."""
    return key[-4:] if key and len(key) >= SHORTEST_KEY_SHOWN_IN_PART else None


@dataclass(frozen=True, slots=True)
class Timeouts:
    connect: float = 10.0
    # Between two chunks of a stream. Keep-alive comments count as chunks, so a provider that
    # is thinking but alive does not trip it. Local models may spend minutes loading first.
    read: float = 120.0
    read_local: float = 300.0


class ProviderClient:
    def __init__(
        self,
        store: KeyStore,
        *,
        config: Config | None = None,
        environ: Mapping[str, str] | None = None,
        timeouts: Timeouts | None = None,
    ) -> None:
        import os

        self._store = store
        self._config = config or Config()
        self._environ = os.environ if environ is None else environ
        self._timeouts = timeouts or Timeouts()
        self._pacer = RequestPacer()
        from byok_tui.core.child_env import child_environment

        # Key commands run with no provider key in their environment.
        self.key_commands = KeyCommands(
            lambda: child_environment(self._environ),
            cache_seconds=self._config.key_command_cache_seconds(),
        )
        self._http: httpx.AsyncClient | None = None
        self._making = threading.Lock()
        # Told the rate-limit headers of every response, with the provider and the key's source.
        self.on_limits: Callable[[str, str, RateLimits], None] | None = None
        # Told of every request once it has ended, however it ended (the request log).
        self.on_request: Callable[[RequestRecord], None] | None = None

    async def _opened(self) -> httpx.AsyncClient:
        """The HTTP client, made in a worker thread the first time: importing httpx and
        loading the TLS context took ~28 ms, which the screen would have waited for."""
        if self._http is not None:
            return self._http
        return await asyncio.to_thread(self._client)

    def prepare(self) -> None:
        """Make the HTTP client now (blocking: from a thread that can wait for it, such as
        the app's opening one), so that the first request does not wait for it; nor for
        anyio's asyncio backend, which httpcore loads at its first request (~40 ms of
        imports on the event loop as the request was leaving)."""
        self._client()
        import anyio

        anyio.run(anyio.sleep, 0)  # in a loop of this thread's own: the backend is loaded

    def _client(self) -> httpx.AsyncClient:
        with self._making:  # a request and the start-up probe may both make it
            return self._make_client() if self._http is None else self._http

    def _make_client(self) -> httpx.AsyncClient:
        from byok_tui.providers.network import http_client

        self._http = http_client(self._timeouts.read, self._timeouts.connect, __version__)
        return self._http

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def __aenter__(self) -> ProviderClient:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    def base_url(self, provider: Provider) -> str:
        return endpoints.base_url(provider, self._environ, self._config)

    def _read_timeout(self, provider: Provider) -> float:
        return self._timeouts.read if provider.needs_key else self._timeouts.read_local

    def failover_on(self, provider: Provider) -> bool:
        """Whether the user turned on failover between `provider`'s keys."""
        from byok_tui.keys.index import read_index

        return read_index(self._store).failover_on(provider.id)

    def keys_of(self, provider: Provider) -> list[ResolvedKey]:
        """Every key of `provider`, in failover order, commands not run."""
        from byok_tui.keys.resolve import keys_of

        return keys_of(provider, self._store, self._environ)

    def remember_stored_keys(self) -> None:
        """Read the keys the store holds now, so that the redaction layer knows one set since
        start-up (in another terminal) before any text that may hold it is stored. Blocking:
        call it in a worker thread."""
        from byok_tui.core.registry import key_providers
        from byok_tui.keys import KeyStoreError
        from byok_tui.keys.index import stored_keys

        # A store that cannot be read: the text is kept all the same, and resolving the key
        # then says what is wrong.
        with contextlib.suppress(KeyStoreError):
            stored_keys(self._store, [p.id for p in key_providers()])

    def resolve(
        self, provider: Provider, *, bot: BotKeyChoice | None = None, label: str | None = None
    ) -> ResolvedKey:
        """The key to send to `provider`, its command (if it has one) not run yet. Blocking:
        it reads the key store, which may be a keyring answering slowly (key_for calls it in
        a worker thread)."""
        return resolve_key(provider, self._store, bot=bot, label=label, environ=self._environ)

    async def key_for(
        self,
        provider: Provider,
        *,
        bot: BotKeyChoice | None = None,
        label: str | None = None,
        key: ResolvedKey | None = None,
    ) -> ResolvedKey:
        """The key to send to `provider` now (`key`, when one was already chosen), its
        command run if it has one. Both in a worker thread: a keyring may take tens of
        milliseconds to answer, a password manager seconds. Raises NoApiKeyError,
        KeyCommandError... before any request."""
        if key is None:
            key = await asyncio.to_thread(self.resolve, provider, bot=bot, label=label)
        if not key.needs_running:
            return key
        what = f"the {provider.display_name} key"
        value = self.key_commands.cached(key.command)
        if value is not None:
            return replace(key, value=value)
        value = await asyncio.to_thread(self.key_commands.run, key.command, what)
        return replace(key, value=value, warning=key_mismatch_warning(provider, value) or "")

    async def stream_chat(
        self,
        provider: Provider,
        chat: ChatRequest,
        *,
        bot_key: str | None = None,
        key: ResolvedKey | None = None,
        on_sent: Callable[[], None] | None = None,
    ) -> AsyncGenerator[StreamEvent, None]:
        """Stream one reply. Raises NoApiKeyError before any I/O, ProviderError on failure.

        `on_sent` is called once the whole request has been written to the connection.
        Closing the generator (`aclose`, or cancelling the task consuming it) closes the
        connection.
        """
        check_settings(provider, chat.temperature, chat.max_tokens)
        key = await self.key_for(provider, bot=BotKeyChoice(key=bot_key), key=key)
        base = self.base_url(provider)
        model = provider.model(chat.model)
        wait = self._pacer.reserve(provider.id, model.id, model.requests_per_minute)
        if wait > 0:
            yield RateLimitWait(wait, model.requests_per_minute or 0)
            await asyncio.sleep(wait)
        wire = family(provider)
        call: HttpCall = wire.chat_call(provider, base, key.value, chat, model)
        log.debug("chat: %s %s (key: %s)", provider.id, chat.model, key.source_text)
        opened = self._open(provider, call, key, purpose="chat", model=chat.model, on_sent=on_sent)
        async with opened as response:
            body = ResponseBody(response)
            async for event in guard(provider, wire.parse_stream(provider, body, chat.tools)):
                if isinstance(event, Usage):
                    opened.usage = event
                yield event
            await body.finish()  # the rest of the body read: the connection kept for the next

    async def list_models(
        self, provider: Provider, *, purpose: str = "models"
    ) -> list[ListedModel]:
        """The provider's own model list. Sends the key when one is available. `purpose`: why
        it is asked for, as the request log says (models, key test, probe)."""
        key: ResolvedKey | None = None
        try:
            key = await self.key_for(provider)
        except NoApiKeyError:
            if not provider.public_model_list:
                raise
        wire = family(provider)
        value = key.value if key and key.source is not KeySource.LOCAL_RUNTIME else None
        call: HttpCall = wire.models_call(provider, self.base_url(provider), value)
        async with self._open(provider, call, key, purpose=purpose) as response:
            body = await read_body(provider, response, limit=32 * 1024 * 1024)
        parsed: list[ListedModel] = wire.parse_models(provider, load_json(provider, body))
        return parsed

    async def balance(self, provider: Provider) -> Balance:
        """The credit left on the key `provider` would be called with (one request).
        Raises NoApiKeyError before any I/O, ProviderError on failure."""
        from byok_tui.providers.balance import parse_balance

        if not provider.balance_path:
            raise ByokError(
                f"{provider.display_name} does not tell a key's balance through its API",
                remedy=f"See {provider.console_url}; `byok-tui usage` shows what byok-tui spent.",
            )
        key = await self.key_for(provider)
        headers, params = carry_key(provider, key.value)
        url = self.base_url(provider) + provider.balance_path
        call = HttpCall("GET", url, headers=headers, params=params)
        opened = self._open(provider, call, key, purpose="balance")
        async with opened as response:
            body = await read_body(provider, response, limit=256 * 1024)
        return parse_balance(provider, load_json(provider, body), time.time())

    def _open(
        self,
        provider: Provider,
        call: HttpCall,
        key: ResolvedKey | None,
        *,
        purpose: str,
        model: str | None = None,
        on_sent: Callable[[], None] | None = None,
    ) -> _OpenResponse:
        split = urlsplit(call.url)  # the query (Gemini's holds the key) is never recorded
        sent = key if key and key.value and key.source is not KeySource.LOCAL_RUNTIME else None
        record = RequestRecord(
            started=time.time(),
            provider=provider.id,
            purpose=purpose,
            method=call.method,
            host=split.hostname or "",
            path=split.path or "/",
            key_source=key.source_text if key is not None else "no key",
            key_last4=last_four(sent.value) if sent else None,
            model=model,
            key_name=sent.name if sent else None,
            key_fingerprint=fingerprint(sent.value) if sent else None,
        )
        return _OpenResponse(self, provider, call, record, on_sent)

    def _report(self, record: RequestRecord) -> None:
        if self.on_request is not None:
            try:
                self.on_request(record)
            except ByokError as error:  # a log entry that could not be kept never fails the call
                log.warning("request not recorded: %s", error.one_line())

    def _note_limits(
        self,
        provider: Provider,
        key_source: str,
        headers: Mapping[str, str],
        error: BaseException | None = None,
    ) -> None:
        """The rate limits a response stated: its headers, and a wait or a spent daily quota
        stated only in an error's body (Gemini's RetryInfo: Gemini sends no such headers)."""
        found = rate_limits(headers)
        if isinstance(error, ProviderError):
            found = stated_in_error(found, error.retry_after, error.daily_limit)
        if found is not None and self.on_limits is not None:
            try:
                self.on_limits(provider.id, key_source, found)
            except ByokError as error:  # a note that could not be kept never fails the call
                log.warning("rate limits not recorded: %s", error.one_line())


class _OpenResponse:
    """`async with` an open, checked response: status, redirects and content type handled."""

    def __init__(
        self,
        client: ProviderClient,
        provider: Provider,
        call: HttpCall,
        record: RequestRecord,
        on_sent: Callable[[], None] | None = None,
    ) -> None:
        self._client = client
        self._provider = provider
        self._call = call
        self._record = record
        self._on_sent = on_sent
        self._context: Any = None
        self._clock = time.monotonic()
        self._status: int | None = None
        self._reported = False
        self.usage: Usage | None = None  # the tokens the reply was billed for, once known

    def _report(self, error: BaseException | None) -> None:
        """Tell the client how the request ended, once."""
        if self._reported:
            return
        self._reported = True
        if error is None:
            outcome = "ok"
        elif isinstance(error, ByokError):
            outcome = error.kind.value
        elif isinstance(error, asyncio.CancelledError | GeneratorExit):
            outcome = "stopped"
        else:
            outcome = "failed"
        self._client._report(
            replace(
                self._record,
                status=self._status,
                outcome=outcome,
                duration_s=time.monotonic() - self._clock,
                usage=self.usage,
                retry_after=error.retry_after if isinstance(error, ProviderError) else None,
            )
        )

    async def _trace(self, event: str, _info: dict[str, Any]) -> None:
        # httpcore's trace hook; `_info` holds the request, key included: never kept or logged.
        if event == "http11.send_request_body.complete" and self._on_sent is not None:
            self._on_sent()

    async def __aenter__(self) -> httpx.Response:
        provider, call = self._provider, self._call
        http = await self._client._opened()
        import httpx  # imported by then, in the thread that made the client
        import orjson

        headers, body = call.headers, None
        if call.json is not None:
            # orjson: 530 KB of history (a long conversation's request) is encoded in 0.1 ms
            # where httpx's json.dumps took 2 ms, on the event loop, before the request left.
            headers = {**headers, "content-type": "application/json"}
            body = orjson.dumps(call.json)

        timeout = httpx.Timeout(
            self._client._read_timeout(provider), connect=self._client._timeouts.connect
        )
        self._context = http.stream(
            call.method,
            call.url,
            headers=headers,
            params=call.params or None,
            content=body,
            timeout=timeout,
            extensions={"trace": self._trace} if self._on_sent else None,
        )
        try:
            try:
                response: httpx.Response = await self._context.__aenter__()
            except httpx.TimeoutException:
                raise timeout_error(provider) from None
            except httpx.HTTPError as error:
                raise network_error(provider, error) from None
        except BaseException as error:
            self._report(error)
            raise
        self._status = response.status_code
        try:
            await check_response(provider, response)
        except BaseException as error:
            self._client._note_limits(provider, self._record.key_source, response.headers, error)
            self._report(error)
            await self._context.__aexit__(None, None, None)
            raise
        self._client._note_limits(provider, self._record.key_source, response.headers)
        return response

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: object
    ) -> None:
        self._report(error)
        if self._context is not None:
            await self._context.__aexit__(kind, error, trace)
