"""A streamed reply's body, read through one iterator from start to end.

A protocol family stops reading at the reply's end (`[DONE]`, `message_stop`, `done`), before
the body's own end (the last, empty chunk). A response closed with its body unread closes its
connection, so the next request waited for a new one: with a real provider a TCP and TLS
handshake, tens of milliseconds or more. Read through this, what the family left is read
afterwards (`finish`) and the connection is kept for the next request. Knows nothing of
Textual; gives the families the body alone, never the request (the key is in it).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

# What may follow a reply's end and still be read: a provider sends the last chunk, 5 bytes,
# at once. Anything longer or later is not waited for: the connection is closed instead.
FINISH_BYTES = 64 * 1024
FINISH_SECONDS = 1.0


class ResponseBody:
    """What a family reads a streamed reply through (`aiter_text`, `aiter_bytes`, as on an
    httpx response), kept open when the family stops so that `finish` can read on."""

    def __init__(self, response: httpx.Response) -> None:
        # Decoded as httpx's own aiter_text decodes: the response's charset, else UTF-8.
        self._encoding = response.encoding or "utf-8"
        self._chunks = response.aiter_bytes()

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        # `async for` does not close what it iterates when the reader stops: finish reads on.
        async for chunk in self._chunks:
            yield chunk

    async def aiter_text(self) -> AsyncIterator[str]:
        decoder = codecs.getincrementaldecoder(self._encoding)(errors="replace")
        async for chunk in self._chunks:
            if text := decoder.decode(chunk):
                yield text
        if text := decoder.decode(b"", True):
            yield text

    async def finish(self) -> None:
        """Read what is left of the body when it is short and comes at once, so that the
        connection is kept for the next request. Otherwise gives up without an error: the
        reply is complete, and closing the response closes its connection."""
        import httpx

        left = 0
        with contextlib.suppress(TimeoutError, httpx.HTTPError):
            async with asyncio.timeout(FINISH_SECONDS):
                async for chunk in self._chunks:
                    left += len(chunk)
                    if left > FINISH_BYTES:
                        return
