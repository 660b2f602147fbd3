"""The sockets under the provider client: httpcore's network-backend interface on asyncio's
own protocol callbacks.

httpx's default backend (anyio's streams) opens a cancel scope for every read and pauses and
resumes the socket's reading around it (two epoll calls): at a model's pace each token is a
read of its own, and those layers were about a third of what the send worker cost a streamed
reply. Here the bytes that arrive wait in a buffer until read, the socket is read on until
64 KiB wait unread (a model's pace never gets there), and a timeout is one timer of the loop's.

Errors are httpcore's own (ConnectError, ReadTimeout, ...), as its default backend raises
them, so httpx maps them as usual. Never logs or keeps what it writes: a request carries a key.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import ssl
from collections.abc import Coroutine, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

import httpcore

if TYPE_CHECKING:
    import httpx

# Unread bytes at which the socket stops being read, and half of it, where reading resumes.
# What httpcore reads at a time: in a burst, reading on past it only added the loop's socket
# callbacks to the work ahead of the first words' frame (with a megabyte, benchmark 2's first
# token came ~5-12 ms later than with anyio's reader).
UNREAD_LIMIT = 1 << 16
# Between attempts at a host's next address when the first has not answered (RFC 8305's
# recommendation, as anyio's connect does).
HAPPY_EYEBALLS_DELAY = 0.25

T = TypeVar("T")

SocketOption = (
    tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]
)


class _Connection(asyncio.Protocol):
    """What the loop tells of one socket: bytes kept until read, the end, room to write."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.unread = bytearray()
        self.ended = False
        self.lost: BaseException | None = None  # why the connection broke, when it did
        self.reading_paused = False
        self.writing_paused = False
        # One waiter: httpcore's HTTP/1.1 reads and writes a connection in turn, never both
        # at once (HTTP/2, which would, is not enabled).
        self._waiter: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.unread += data
        if len(self.unread) > UNREAD_LIMIT and self.transport is not None:
            self.transport.pause_reading()
            self.reading_paused = True
        self._wake()

    def eof_received(self) -> bool:
        self.ended = True
        self._wake()
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended = True
        self.lost = exc
        self.writing_paused = False
        self._wake()

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        self._wake()

    async def wait(self, timeout: float | None) -> None:
        """Until the loop tells something new of the socket; TimeoutError after `timeout`."""
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        # In a context of its own (see _apart): a timer cancelled stays queued until it was due.
        expiry = (
            None
            if timeout is None
            else loop.call_later(timeout, _expire, waiter, context=contextvars.Context())
        )
        try:
            await waiter
        finally:
            self._waiter = None
            if expiry is not None:
                expiry.cancel()

    def take(self, most: int) -> bytes:
        if most >= len(self.unread):  # the usual case: all of it, without moving the rest
            taken = bytes(self.unread)
            self.unread.clear()
        else:
            taken = bytes(self.unread[:most])
            del self.unread[:most]
        if self.reading_paused and len(self.unread) <= UNREAD_LIMIT // 2:
            self.reading_paused = False
            if self.transport is not None and not self.transport.is_closing():
                # The loop reads the socket in the context the reading resumes in (_apart).
                contextvars.Context().run(self.transport.resume_reading)
        return taken

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())


class ProtocolStream(httpcore.AsyncNetworkStream):
    """One connection, plain or TLS, as httpcore reads and writes it."""

    def __init__(self, connection: _Connection) -> None:
        self._connection = connection

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        connection = self._connection
        if connection.unread or connection.ended:
            # A checkpoint, as anyio's reads are: in a burst every read finds bytes waiting,
            # and a reader that never yielded held off the frame with the first words.
            await asyncio.sleep(0)
        while not connection.unread and not connection.ended:
            try:
                await connection.wait(timeout)
            except TimeoutError:
                raise httpcore.ReadTimeout("no data within the read timeout") from None
        if connection.unread:
            return connection.take(max_bytes)
        if connection.lost is not None:
            raise httpcore.ReadError(_why(connection.lost)) from None
        return b""  # the server ended the connection

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        connection = self._connection
        transport = connection.transport
        if transport is None or transport.is_closing() or connection.ended:
            raise httpcore.WriteError(_why(connection.lost, "the connection is closed"))
        transport.write(buffer)
        while connection.writing_paused and not connection.ended:
            try:
                await connection.wait(timeout)
            except TimeoutError:
                raise httpcore.WriteTimeout("no room to write within the timeout") from None
        if connection.lost is not None:
            raise httpcore.WriteError(_why(connection.lost))

    async def aclose(self) -> None:
        transport = self._connection.transport
        if transport is not None:
            transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        connection = self._connection
        transport = connection.transport
        if transport is None:
            raise httpcore.ConnectError("the connection is closed")
        loop = asyncio.get_running_loop()
        try:
            secured = await _apart(
                asyncio.wait_for(
                    loop.start_tls(
                        transport, connection, ssl_context, server_hostname=server_hostname
                    ),
                    timeout,
                )
            )
        except TimeoutError:
            transport.close()
            raise httpcore.ConnectTimeout("the TLS handshake took too long") from None
        except (OSError, ssl.SSLError) as error:  # SSLError is an OSError; named for the reader
            transport.close()
            raise httpcore.ConnectError(_why(error)) from None
        if secured is None:  # the connection went away during the handshake
            raise httpcore.ConnectError("the connection closed during the TLS handshake")
        connection.transport = secured
        return ProtocolStream(connection)

    def get_extra_info(self, info: str) -> Any:
        connection = self._connection
        transport = connection.transport
        if info == "is_readable":
            # An idle connection with something to read was closed by the server (or sent
            # what no request asked for): httpcore then makes a new one.
            return bool(connection.unread) or connection.ended
        if transport is None:
            return None
        name = {
            "ssl_object": "ssl_object",
            "client_addr": "sockname",
            "server_addr": "peername",
            "socket": "socket",
        }.get(info)
        return None if name is None else transport.get_extra_info(name)


class ProtocolBackend(httpcore.AsyncNetworkBackend):
    """Connections made by the running asyncio loop (TCP_NODELAY set, as it sets it)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        connecting = loop.create_connection(
            _Connection,
            host,
            port,
            local_addr=None if local_address is None else (local_address, 0),
            happy_eyeballs_delay=HAPPY_EYEBALLS_DELAY,
        )
        return _opened(await _apart(_connected(connecting, timeout)), socket_options)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        connecting = loop.create_unix_connection(_Connection, path)
        return _opened(await _apart(_connected(connecting, timeout)), socket_options)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


async def _apart(work: Coroutine[Any, Any, T]) -> T:
    """`work` run in a context of its own, not the caller's. The loop keeps the context a
    callback was scheduled in: a connection's socket is read in the context it was opened
    (or its reading resumed) in, for as long as it stays pooled, and a timer cancelled stays
    queued until it was due (minutes, for a timeout). In the caller's context, either kept
    what that context holds (in the app, the UI's worker that sent, and its screen) alive
    as long."""
    return await asyncio.get_running_loop().create_task(work, context=contextvars.Context())


async def _connected(
    connecting: Any, timeout: float | None
) -> tuple[asyncio.BaseTransport, _Connection]:
    try:
        transport, connection = await asyncio.wait_for(connecting, timeout)
    except TimeoutError:
        raise httpcore.ConnectTimeout("no connection within the connect timeout") from None
    except OSError as error:
        raise httpcore.ConnectError(_why(error)) from None
    return transport, connection


def _opened(
    made: tuple[asyncio.BaseTransport, _Connection], socket_options: Iterable[SocketOption] | None
) -> ProtocolStream:
    transport, connection = made
    sock = transport.get_extra_info("socket")
    for option in socket_options or ():
        sock.setsockopt(*option)
    return ProtocolStream(connection)


def _why(error: BaseException | None, otherwise: str = "the connection broke") -> str:
    """The error's own words (an OSError's text names no URL, so no key), else `otherwise`."""
    return (str(error) or type(error).__name__) if error is not None else otherwise


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """What every client verifies servers against, loaded once a process (~40-60 ms each
    time): httpx's default (certifi's certificates), never a file the environment names."""
    import httpx

    return httpx.create_ssl_context(verify=True, trust_env=False)


def http_client(read_timeout: float, connect_timeout: float, version: str) -> httpx.AsyncClient:
    """The HTTP client every provider request goes through."""
    import httpx
    import orjson  # noqa: F401 (the request bodies' encoder, loaded here off the event loop)

    from byok_tui.compat import with_network_backend

    # No proxies, .netrc credentials or certificate paths picked up from the environment.
    transport = httpx.AsyncHTTPTransport(verify=_tls_context(), trust_env=False)
    with_network_backend(transport, ProtocolBackend())  # cheaper reads: this module's
    return httpx.AsyncClient(
        transport=transport,
        follow_redirects=False,  # a redirect must never carry a key to another host
        trust_env=False,
        timeout=httpx.Timeout(read_timeout, connect=connect_timeout),
        headers={"user-agent": f"byok-tui/{version}"},
    )
