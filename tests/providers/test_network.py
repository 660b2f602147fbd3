"""The network backend under the provider client (byok_tui/providers/network.py): what
httpcore's own backend does, on real sockets: TLS with the certificate checked, timeouts,
refused and broken connections as httpcore's errors, megabytes each way with reading and
writing held back and resumed, and an idle connection the server closed never reused."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import socket
import ssl
import struct
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpcore
import httpx
import pytest
import trustme

from byok_tui.compat import with_network_backend
from byok_tui.keys import KeyStore
from byok_tui.providers.network import UNREAD_LIMIT, ProtocolBackend, _Connection
from tests.support.provider_client import client_for, collect, text_of
from tests.support.provider_server import ProviderServer, openai_reply

BODY = bytes(range(256)) * 1200  # ~300 KB


class CountingBackend(ProtocolBackend):
    def __init__(self) -> None:
        self.connections = 0

    async def connect_tcp(self, *args: Any, **kwargs: Any) -> httpcore.AsyncNetworkStream:
        self.connections += 1
        return await super().connect_tcp(*args, **kwargs)


def client_through(
    backend: ProtocolBackend, verify: ssl.SSLContext | bool = True
) -> httpx.AsyncClient:
    transport = httpx.AsyncHTTPTransport(verify=verify, trust_env=False)
    with_network_backend(transport, backend)
    return httpx.AsyncClient(transport=transport, trust_env=False, timeout=5)


@contextmanager
def https_server(names: tuple[str, ...], ca: trustme.CA) -> Iterator[str]:
    """A server on 127.0.0.1 whose certificate (from `ca`) names `names`; answers BODY."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-length", str(len(BODY)))
            self.end_headers()
            self.wfile.write(BODY)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(*names).configure_cert(context)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02})
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def trusting(ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return context


async def test_a_reply_over_tls_arrives_whole_through_the_backend() -> None:
    ca = trustme.CA()
    backend = CountingBackend()
    with https_server(("127.0.0.1",), ca) as url:
        async with client_through(backend, trusting(ca)) as client:
            for _ in range(2):
                reply = await client.get(url)
                assert reply.status_code == 200 and reply.content == BODY
    assert backend.connections == 1, "the TLS connection was kept for the next request"


@pytest.mark.parametrize(
    ("names", "trusted"),
    [(("example.org",), True), (("127.0.0.1",), False)],
    ids=["certificate-for-another-host", "certificate-from-an-unknown-authority"],
)
async def test_a_certificate_that_does_not_check_out_is_refused(
    names: tuple[str, ...], trusted: bool
) -> None:
    ca = trustme.CA()
    with https_server(names, ca) as url:
        async with client_through(ProtocolBackend(), trusting(ca) if trusted else True) as client:
            with pytest.raises(httpx.ConnectError):
                await client.get(url)


@contextmanager
def raw_server(serve: Callable[[socket.socket], None]) -> Iterator[int]:
    """A TCP server on 127.0.0.1 running `serve(connection)` for each connection; its port."""
    listener = socket.create_server(("127.0.0.1", 0))
    stopping = threading.Event()

    def accept() -> None:
        listener.settimeout(0.05)
        while not stopping.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=serve, args=(connection,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stopping.set()
        thread.join()
        listener.close()


def read_request(connection: socket.socket) -> None:
    seen = b""
    while b"\r\n\r\n" not in seen:
        seen += connection.recv(65536)


async def test_a_server_that_stops_sending_times_the_read_out() -> None:
    def stall(connection: socket.socket) -> None:
        read_request(connection)
        connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nten bytes.")
        time.sleep(2)
        connection.close()

    with raw_server(stall) as port:
        async with client_through(ProtocolBackend()) as client:
            started = time.monotonic()
            with pytest.raises(httpx.ReadTimeout):
                await client.get(f"http://127.0.0.1:{port}/", timeout=0.3)
            assert time.monotonic() - started < 1.5


async def test_a_connection_cut_mid_reply_is_an_error_not_a_short_reply() -> None:
    def cut(connection: socket.socket) -> None:
        read_request(connection)
        connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nten bytes.")
        linger_none = struct.pack("ii", 1, 0)  # closed with a reset: the rest never comes
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger_none)
        connection.close()

    with raw_server(cut) as port:
        async with client_through(ProtocolBackend()) as client:
            with pytest.raises((httpx.ReadError, httpx.RemoteProtocolError)):
                await client.get(f"http://127.0.0.1:{port}/")


async def test_a_refused_connection_is_a_connect_error() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
    async with client_through(ProtocolBackend()) as client:
        with pytest.raises(httpx.ConnectError):
            await client.get(f"http://127.0.0.1:{port}/")


async def test_megabytes_each_way_arrive_whole_while_reading_and_writing_wait_for_room(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    size = 3 * UNREAD_LIMIT
    sent = bytes(range(256)) * (size // 256)
    received = bytearray()
    writes_held: list[bool] = []
    pause_writing = _Connection.pause_writing

    def noted(self: _Connection) -> None:
        writes_held.append(True)
        pause_writing(self)

    monkeypatch.setattr(_Connection, "pause_writing", noted)

    def echo(connection: socket.socket) -> None:
        while len(received) < size:
            received.extend(connection.recv(65536))
        connection.sendall(bytes(received))
        connection.close()

    small_send_buffer = [(socket.SOL_SOCKET, socket.SO_SNDBUF, 16384)]
    with raw_server(echo) as port:
        backend = ProtocolBackend()
        stream = await backend.connect_tcp("127.0.0.1", port, 5, None, small_send_buffer)
        await stream.write(sent, timeout=10)
        assert writes_held, "the write never had to wait for room"
        while len(received) < size:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.3)  # the echo arrives and nothing reads it
        connection = stream._connection  # type: ignore[attr-defined]
        assert connection.reading_paused, "the socket was read on past the limit"
        echoed = bytearray()
        while chunk := await stream.read(65536, timeout=5):
            echoed += chunk
        await stream.aclose()
    assert bytes(received) == sent
    assert bytes(echoed) == sent


async def test_an_idle_connection_the_server_closed_is_not_used_again() -> None:
    connections = 0

    def answer_once(connection: socket.socket) -> None:
        nonlocal connections
        connections += 1
        read_request(connection)
        connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        time.sleep(0.05)
        connection.close()  # the server's keep-alive ends at once

    with raw_server(answer_once) as port:
        async with client_through(ProtocolBackend()) as client:
            for _ in range(2):
                reply = await client.get(f"http://127.0.0.1:{port}/")
                assert reply.content == b"ok"
                await asyncio.sleep(0.3)
    assert connections == 2


async def test_the_provider_client_connects_through_the_backend(
    server: ProviderServer, store: KeyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted: list[str] = []
    real = ProtocolBackend.connect_tcp

    async def counting(
        self: ProtocolBackend, host: str, *args: Any, **kwargs: Any
    ) -> httpcore.AsyncNetworkStream:
        counted.append(host)
        return await real(self, host, *args, **kwargs)

    monkeypatch.setattr(ProtocolBackend, "connect_tcp", counting)
    server.reply_with(openai_reply("Hello", " there"))
    events = await collect(client_for("openai", server, store), "openai")
    assert text_of(events) == "Hello there"
    assert counted == ["127.0.0.1"]


async def test_a_read_of_bytes_already_waiting_lets_the_loop_run_first() -> None:
    """A checkpoint, as anyio's reads are: in a burst every read finds bytes waiting, and a
    reader that never yielded kept the screen from drawing the first words until the burst
    was read (benchmark 2's first token ~12 ms later)."""

    def send_and_hold(connection: socket.socket) -> None:
        connection.sendall(b"x" * 100_000)
        time.sleep(1)
        connection.close()

    with raw_server(send_and_hold) as port:
        stream = await ProtocolBackend().connect_tcp("127.0.0.1", port, timeout=5)
        connection = stream._connection  # type: ignore[attr-defined]
        while len(connection.unread) < 100_000:
            await asyncio.sleep(0.01)
        ran: list[bool] = []
        asyncio.get_running_loop().call_soon(ran.append, True)
        assert await stream.read(10, timeout=5) == b"x" * 10
        assert ran, "the read returned without letting the loop run"
        await stream.aclose()


async def test_a_reader_s_context_is_not_kept_once_its_read_is_done() -> None:
    """What the reading task's context holds (in the app: the UI worker reading, and through
    it its screen) is freed once the read is done, while the connection stays pooled for
    the next request: neither the read's timeout timers, cancelled but queued in the loop
    until they were due (a minute here), nor the loop's reading of the pooled socket keep
    that context."""
    held: contextvars.ContextVar[object] = contextvars.ContextVar("held")

    class Screen:  # what a UI worker's context reaches
        pass

    def in_pieces(connection: socket.socket) -> None:
        read_request(connection)
        connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 30\r\n\r\n")
        for _ in range(3):  # each piece waited for: a read with a timer of its own
            time.sleep(0.05)
            connection.sendall(b"ten bytes.")
        time.sleep(2)  # kept open: the connection stays in the pool
        connection.close()

    async def read_holding(client: httpx.AsyncClient, url: str) -> weakref.ref[Screen]:
        screen = Screen()
        held.set(screen)
        reply = await client.get(url, timeout=60)
        assert reply.content == b"ten bytes." * 3
        return weakref.ref(screen)

    loop = asyncio.get_running_loop()
    # Due sooner than the read's timers, as the app's own timers always are: cancelled
    # timers behind it stay queued (the loop drops them only from the queue's head).
    sooner = loop.call_later(30, lambda: None, context=contextvars.Context())
    with raw_server(in_pieces) as port:
        async with client_through(ProtocolBackend()) as client:
            left = await asyncio.create_task(read_holding(client, f"http://127.0.0.1:{port}/"))
            await asyncio.sleep(0)  # the loop's callback that woke this step held the task
            gc.collect()
            assert left() is None, "the reader's context is kept after its read"
    sooner.cancel()
