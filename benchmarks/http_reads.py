"""What reading a paced stream costs the HTTP client alone, with nothing parsed or drawn: the
app's client (httpx's async API, on httpcore and byok-tui's network backend,
byok_tui/providers/network.py) against httpx's blocking one (what a plain-text client uses).
Benchmark 12 reports both beside the app's CPU: at a model's pace each token is a read of its
own, and the async stack's cost per read sets a floor under the app's."""

from __future__ import annotations

import asyncio
import time

import httpx


def async_read_cpu(url: str) -> float:
    """CPU seconds of the thread reading the stream with httpx.AsyncClient, loop included."""

    async def read() -> float:
        from byok_tui.compat import with_network_backend
        from byok_tui.providers.network import ProtocolBackend

        transport = httpx.AsyncHTTPTransport(trust_env=False)
        with_network_backend(transport, ProtocolBackend())  # as the app's client has it
        async with (
            httpx.AsyncClient(transport=transport) as client,
            client.stream("POST", url, json={}) as reply,
        ):
            started = time.thread_time()
            async for _chunk in reply.aiter_raw():
                pass
            return time.thread_time() - started

    return asyncio.run(read())


def sync_read_cpu(url: str) -> float:
    """CPU seconds of the thread reading the stream with httpx.Client."""
    with httpx.Client() as client, client.stream("POST", url, json={}) as reply:
        started = time.thread_time()
        for _chunk in reply.iter_raw():
            pass
        return time.thread_time() - started
