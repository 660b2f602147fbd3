"""A reply at a model's pace is read a few tokens at a time: each token arrives on its own,
and each wait for one through the HTTP stack costs ~0.2 ms of CPU (benchmark 12: async httpx read a
paced 2,000-token stream for 0.46-0.50 s of CPU, httpx's blocking client for 0.17-0.19 s).
After waiting for a piece the reader waits a moment more and takes what came meanwhile; text already
waiting (a burst) is read at once. The text is the same either way."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from byok_tui.keys import KeyStore
from byok_tui.providers.client import ProviderClient
from byok_tui.providers.wire.common import GATHER_SECONDS
from tests.support.provider_client import chat, client_for, collect, text_of
from tests.support.provider_server import ProviderServer, Reply, openai_reply, sse


def count_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of each read of the socket the HTTP stack made."""
    from byok_tui.providers.network import ProtocolStream

    sizes: list[int] = []
    real = ProtocolStream.read

    async def counted(self: ProtocolStream, *args: Any, **kwargs: Any) -> bytes:
        data = await real(self, *args, **kwargs)
        sizes.append(len(data))
        return data

    monkeypatch.setattr(ProtocolStream, "read", counted)
    return sizes


def count_pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    pauses: list[float] = []
    real = asyncio.sleep

    async def noted(delay: float, *args: Any) -> Any:
        if delay == GATHER_SECONDS:
            pauses.append(delay)
        return await real(delay, *args)

    monkeypatch.setattr(asyncio, "sleep", noted)
    return pauses


async def test_tokens_at_a_models_pace_are_read_a_few_at_a_time(
    server: ProviderServer, store: KeyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    pieces = [f"w{n} " for n in range(100)]
    server.reply_with(openai_reply(*pieces, pause=0.005))  # ~0.5 s, a model's pace
    reads, pauses = count_reads(monkeypatch), count_pauses(monkeypatch)
    events = await collect(client_for("openai", server, store), "openai")
    assert text_of(events) == "".join(pieces)
    # A pause after each wait, then a read of what gathered and one waiting for the next
    # token: ~77 reads where there were 102, one a token and the stream's end.
    assert len(pauses) >= 5
    assert 10 <= len(reads) <= 85, f"{len(reads)} reads for 100 tokens: one a token"


async def test_text_already_waiting_is_read_without_a_pause(
    server: ProviderServer, store: KeyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    pieces = [f"word{n} " for n in range(3000)]
    events_sent = sse(*({"choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces))
    burst = b"".join(step for step in events_sent if isinstance(step, bytes))
    end = sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}, done=True)
    server.reply_with(Reply(steps=[burst, *end]))  # all of it in one write: a burst
    reads, pauses = count_reads(monkeypatch), count_pauses(monkeypatch)
    events = await collect(client_for("openai", server, store), "openai")
    assert text_of(events) == "".join(pieces)
    assert max(reads) > 10_000
    assert len(pauses) <= 2, "the reader paused between large reads"


async def test_a_local_runtimes_lines_at_its_pace_are_read_a_few_at_a_time(
    server: ProviderServer, store: KeyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same for NDJSON (Ollama): a line per token."""
    pieces = [f"w{n} " for n in range(100)]
    steps: list[bytes | float] = []
    for piece in pieces:
        message = {"role": "assistant", "content": piece}
        steps += [(json.dumps({"message": message, "done": False}) + "\n").encode(), 0.005]
    last = {"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"}
    steps.append((json.dumps(last) + "\n").encode())
    server.reply_with(Reply(headers={"content-type": "application/x-ndjson"}, steps=steps))
    reads, pauses = count_reads(monkeypatch), count_pauses(monkeypatch)
    client = ProviderClient(store, environ={"OLLAMA_HOST": server.base_url.removeprefix("http://")})
    events = await collect(client, "ollama", chat("llama3.2"))
    assert text_of(events) == "".join(pieces)
    assert len(pauses) >= 5
    assert len(reads) <= 85, f"{len(reads)} reads for 100 lines: one a line"
