"""A real HTTP server on 127.0.0.1 for tests: real sockets, real headers."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class SeenRequest:
    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class LoopbackServer:
    base_url: str
    requests: list[SeenRequest]


@contextmanager
def json_server(body: bytes = b'{"ok": true}', status: int = 200) -> Iterator[LoopbackServer]:
    """Answers every GET and POST with `body`; records what it saw."""
    seen: list[SeenRequest] = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            if length:
                self.rfile.read(length)
            seen.append(SeenRequest(self.command, self.path, dict(self.headers.items())))
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = _answer
        do_POST = _answer

        def log_message(self, format: str, *args: object) -> None:
            pass  # keep test output quiet

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    try:
        yield LoopbackServer(f"http://127.0.0.1:{server.server_address[1]}", seen)
    finally:
        server.shutdown()
        server.server_close()
