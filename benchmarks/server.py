"""A loopback provider for benchmarks that timestamps what matters: when each request
arrives, and when the first and last bytes of a reply leave.

It runs in its own process, as a real provider would: a server thread inside the benchmark
process would share the interpreter lock with the app and slow both. Times are
`time.perf_counter()`, which on Linux is the system-wide monotonic clock, so the two
processes' readings compare.
"""

from __future__ import annotations

import json
import multiprocessing
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.client import HTTPConnection
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing.connection import Connection

PARAGRAPH_TOKENS = 80  # a model's paragraph, in tokens of about one word
LIST_EVERY = 400
CODE_EVERY = 700


def reply_pieces(tokens: int) -> list[str]:
    """A reply shaped like a model's: paragraphs of prose with inline code and bold, a short
    list every 400 tokens, a code block every 700; one piece per token."""
    words = ["the ", "model ", "streams ", "`code` ", "**bold** ", "text ", "and ", "more, "]
    pieces: list[str] = []
    for n in range(1, tokens + 1):
        # A list or a code block starts a block of its own, as a model's does.
        if n % CODE_EVERY == 0:
            pieces += ["\n\n```python\n", "def add(a, b):\n", "    return a + b\n", "```\n\n"]
        elif n % LIST_EVERY == 0:
            pieces += ["\n\n- first point\n", "- second point with `code`\n", "- third\n\n"]
        elif n % PARAGRAPH_TOKENS == 0:
            pieces.append("end.\n\n")
        else:
            pieces.append(words[n % len(words)])
    return pieces[:tokens]


def token_stream(tokens: int) -> list[bytes]:
    """The reply as OpenAI-compatible SSE events, one token each, then the stop events."""
    events = [
        "data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": piece}}]}) + "\n\n"
        for piece in reply_pieces(tokens)
    ]
    events.append('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n')
    events.append("data: [DONE]\n\n")
    return [e.encode() for e in events]


class BenchServer:
    """The parent's view of the server process: its address and what it has reported."""

    def __init__(self, base_url: str, reports: Connection) -> None:
        self.base_url = base_url
        self._reports = reports
        self._seen: dict[str, list[float]] = {"arrival": [], "first": [], "last": []}
        self._keys: list[str] = []

    def reply_with(self, tokens: int, per_second: float = 0.0) -> None:
        """Each following request gets a `tokens`-token reply, as fast as it can be sent or
        (`per_second`) paced as a model writes."""
        host, port = self.base_url.removeprefix("http://").split(":")
        connection = HTTPConnection(host, int(port), timeout=10)
        connection.request("GET", f"/_reply?tokens={tokens}&per_second={per_second}")
        connection.getresponse().read()
        connection.close()

    def _drain(self) -> None:
        while not self._reports.closed and self._reports.poll():
            try:
                kind, when, key = self._reports.recv()
            except EOFError:  # the server has stopped: everything it sent has been read
                self._reports.close()
                return
            self._seen[kind].append(when)
            if kind == "arrival":
                self._keys.append(key)

    def _reported(self, kind: str) -> list[float]:
        self._drain()
        return self._seen[kind]

    @property
    def arrivals(self) -> list[float]:
        return self._reported("arrival")

    @property
    def first_byte(self) -> list[float]:
        return self._reported("first")

    @property
    def last_byte(self) -> list[float]:
        return self._reported("last")

    @property
    def keys(self) -> list[str]:
        self._drain()
        return self._keys


class _QuietServer(ThreadingHTTPServer):
    """An app that exits drops its kept-alive connection: that is no error worth a traceback
    in the benchmark's output."""

    def handle_error(self, request: object, client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


def _serve(reports: Connection, port_out: Connection) -> None:
    reply = token_stream(1)
    pause = 0.0  # between two tokens, when paced
    sending = threading.Lock()

    def report(kind: str, key: str = "") -> None:
        when = time.perf_counter()
        with sending:
            reports.send((kind, when, key))

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            nonlocal reply, pause
            asked = dict(part.split("=") for part in self.path.partition("?")[2].split("&"))
            reply = token_stream(int(asked["tokens"]))
            rate = float(asked.get("per_second", 0))
            pause = 1 / rate if rate else 0.0
            self.send_response(204)
            self.end_headers()

        def do_POST(self) -> None:
            report("arrival", self.headers.get("authorization", ""))
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()  # the connection stays open for the next request
            started = time.perf_counter()
            for index, event in enumerate(reply):
                if pause:  # on a schedule, so that a late write does not slow the rest
                    time.sleep(max(0.0, started + index * pause - time.perf_counter()))
                self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
                self.wfile.flush()
                if index == 0:
                    report("first")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            report("last")

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = _QuietServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port_out.send(server.server_address[1])
    server.serve_forever(poll_interval=0.02)


@contextmanager
def bench_server() -> Iterator[BenchServer]:
    context = multiprocessing.get_context("spawn")  # no copy of the benchmark's threads or loop
    reports_in, reports_out = context.Pipe(duplex=False)
    port_in, port_out = context.Pipe(duplex=False)
    process = context.Process(target=_serve, args=(reports_out, port_out), daemon=True)
    process.start()
    try:
        if not port_in.poll(30):
            raise RuntimeError("the benchmark server did not start")
        server = BenchServer(f"http://127.0.0.1:{port_in.recv()}", reports_in)
        yield server
        server._drain()
    finally:
        process.terminate()
        process.join(10)
