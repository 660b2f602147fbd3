"""A scriptable HTTP/1.1 server on 127.0.0.1 that plays a provider.

Real sockets and real chunked streaming: each reply is a status, headers and a list of steps
(bytes to send as one chunk, or a float: seconds to pause). `abort=True` drops the connection
without finishing the body, as a provider whose connection breaks mid-reply would.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    steps: Sequence[bytes | float] = field(default_factory=list)
    abort: bool = False


@dataclass
class Seen:
    method: str
    target: str  # path and query string, exactly as sent
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)

    def header(self, name: str) -> str | None:
        return {k.lower(): v for k, v in self.headers.items()}.get(name.lower())


@dataclass
class ProviderServer:
    base_url: str
    requests: list[Seen]
    replies: list[Reply]
    disconnects: list[str]  # targets whose client went away before the reply was sent
    connections: list[tuple[str, int]]  # one per connection made

    def reply_with(self, *replies: Reply) -> None:
        self.replies[:] = list(replies)


def sse(*events: Any, event: str | None = None, done: bool = False) -> list[bytes | float]:
    """Steps that send each event as one SSE `data:` block (JSON-encoded unless a string)."""
    steps: list[bytes | float] = []
    for item in events:
        data = item if isinstance(item, str) else json.dumps(item)
        prefix = f"event: {event}\n" if event else ""
        steps.append(f"{prefix}data: {data}\n\n".encode())
    if done:
        steps.append(b"data: [DONE]\n\n")
    return steps


@contextmanager
def provider_server(
    default: Callable[[Seen], Reply] | None = None, *, keep_alive: bool = False
) -> Iterator[ProviderServer]:
    """`keep_alive`: connections stay open for the next request, as providers' do (else each
    reply says `connection: close` and the server closes it)."""
    seen: list[Seen] = []
    replies: list[Reply] = []
    disconnects: list[str] = []
    connections: list[tuple[str, int]] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            connections.append(self.client_address)
            super().setup()

        def _handle(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            request = Seen(self.command, self.path, dict(self.headers.items()), body)
            seen.append(request)
            if replies:
                reply = replies.pop(0) if len(replies) > 1 else replies[0]
            elif default is not None:
                reply = default(request)
            else:
                reply = Reply(404, {"content-type": "application/json"}, [b'{"error":"none"}'])
            try:
                self._send(reply)
            except (BrokenPipeError, ConnectionResetError):
                disconnects.append(self.path)
            self.close_connection = not keep_alive or reply.abort

        def _send(self, reply: Reply) -> None:
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("transfer-encoding", "chunked")
            if not keep_alive:
                self.send_header("connection", "close")
            self.end_headers()
            self.wfile.flush()
            for step in reply.steps:
                if isinstance(step, float):
                    time.sleep(step)
                    continue
                self.wfile.write(f"{len(step):x}\r\n".encode() + step + b"\r\n")
                self.wfile.flush()
            if reply.abort:
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        do_GET = _handle
        do_POST = _handle

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    try:
        yield ProviderServer(
            f"http://127.0.0.1:{server.server_address[1]}", seen, replies, disconnects, connections
        )
    finally:
        server.shutdown()
        server.server_close()


def openai_reply(
    *pieces: str,
    finish: bool = True,
    pause: float = 0.0,
    usage: dict[str, Any] | None = None,
    finish_reason: str = "stop",
) -> Reply:
    """An OpenAI-compatible streamed answer, the one builder the tests use: a chunk per piece
    (`pause` seconds apart), then the stop (`finish_reason`: `length` at the length limit),
    the `usage` chunk if given, and `[DONE]`; `finish=False` ends without them, as a cut
    stream does."""
    steps: list[bytes | float] = []
    for piece in pieces or ("ok",):
        steps += sse({"choices": [{"index": 0, "delta": {"content": piece}}]})
        if pause:
            steps.append(pause)
    if finish:
        end: list[dict[str, Any]] = [
            {"choices": [{"index": 0, "delta": {}, "finish_reason": finish_reason}]}
        ]
        if usage is not None:
            end.append({"choices": [], "usage": usage})
        steps += sse(*end, done=True)
    return Reply(steps=steps)
