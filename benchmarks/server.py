"""A loopback provider for benchmarks that timestamps what matters: when each request
arrives, and when the first and last bytes of a reply leave."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def token_stream(tokens: int) -> list[bytes]:
    words = ["alpha ", "beta ", "`code` ", "**bold** ", "gamma\n\n", "- item\n"]
    events = [
        "data: "
        + json.dumps({"choices": [{"index": 0, "delta": {"content": words[n % 6]}}]})
        + "\n\n"
        for n in range(tokens)
    ]
    events.append('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n')
    events.append("data: [DONE]\n\n")
    return [e.encode() for e in events]


@dataclass
class BenchServer:
    base_url: str
    arrivals: list[float] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    first_byte: list[float] = field(default_factory=list)
    last_byte: list[float] = field(default_factory=list)
    reply: list[bytes] = field(default_factory=lambda: token_stream(1))


@contextmanager
def bench_server() -> Iterator[BenchServer]:
    state = BenchServer("")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            state.arrivals.append(time.perf_counter())
            state.keys.append(self.headers.get("authorization", ""))
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.send_header("connection", "close")
            self.end_headers()
            for index, event in enumerate(state.reply):
                self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
                self.wfile.flush()
                if index == 0:
                    state.first_byte.append(time.perf_counter())
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            state.last_byte.append(time.perf_counter())
            self.close_connection = True

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
