"""MCP servers kept running between calls: a stdio server started (or an HTTP one contacted)
for a message stays up for the next call and the next message, instead of being started
anew for each (~1 s for a small Python server, more through `npx`).

Each server is held by a task of its own, which opened the SDK's client and closes it
(the SDK ends a stdio server's whole process group) when told to: when the app or `ask`
ends, when a call to it timed out or was stopped (a server busy with an abandoned call is
not trusted with the next), or when it died. A server found dead when a message lists its
tools is started again at once; one that died during a call is said with that call, and
started again by the next use (a call is never run twice). A server whose entry in
config.toml changed is started again with its new entry, and one given a stored key whose
key has changed since (rotated) with the new key. Nothing here starts a server unasked.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from byok_tui.tools.servers import ToolServer

# How long a held server is given to end when told to, before its task is cancelled (the
# SDK closes its input, waits ~2 s, then terminates and kills the group).
END_SECONDS = 8.0
log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Held:
    server: ToolServer
    keys: str  # a digest of the stored keys it was given (never a key)
    task: asyncio.Task[None]
    ready: asyncio.Future[Any]  # the open client
    stop: asyncio.Event  # set: the holding task closes the client

    @property
    def alive(self) -> bool:
        return not self.task.done() and not self.stop.is_set()


Opener = Callable[[ToolServer], contextlib.AbstractAsyncContextManager[Any]]


class HeldServers:
    """The servers of one app or one `ask`, by name; `opener` opens a server's client (the
    SDK's, with the environment, keys and log its config gives it). Used from one event
    loop."""

    def __init__(self) -> None:
        self._held: dict[str, _Held] = {}
        self._ending: set[asyncio.Task[None]] = set()

    async def client(self, server: ToolServer, opener: Opener, keys: str = "") -> Any:
        """The server's open client: the one held, or a new one (started now). `keys`: a
        digest of the stored keys its config gives it, as they are now."""
        held = self._held.get(server.name)
        if held is not None and (not held.alive or (held.server, held.keys) != (server, keys)):
            await self._end_soon(server.name)
            held = None
        if held is None:
            held = self._start(server, opener, keys)
        return await asyncio.shield(held.ready)

    def _start(self, server: ToolServer, opener: Opener, keys: str) -> _Held:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[Any] = loop.create_future()
        stop = asyncio.Event()

        async def hold() -> None:
            try:
                async with opener(server) as client:
                    ready.set_result(client)
                    await stop.wait()
            except BaseException as error:
                if not ready.done():
                    if isinstance(error, asyncio.CancelledError):
                        ready.cancel()
                    else:
                        ready.set_exception(error)
                if isinstance(error, asyncio.CancelledError):
                    raise
            finally:
                if self._held.get(server.name) is held:
                    del self._held[server.name]

        task = loop.create_task(hold(), name=f"mcp-server-{server.name}")
        held = _Held(server, keys, task, ready, stop)
        self._held[server.name] = held
        # Read the outcome even when no caller waits for it any more (a cancelled start).
        ready.add_done_callback(lambda done: done.cancelled() or done.exception())
        return held

    async def use(
        self,
        server: ToolServer,
        opener: Opener,
        work: Callable[[Any], Awaitable[Any]],
        answered: Callable[[BaseException], bool],
        *,
        again: bool = False,
        keys: str = "",
    ) -> Any:
        """`work` done with the server's client (`keys`: as for `client`). The server is
        ended when the work failed otherwise than with an answer (`answered`: the server
        said why it could not; it died, or did not answer in time), or was cancelled: the
        next use starts it again.
        `again`: the work can be done twice (a listing, not a call): when a server held
        since an earlier use fails it, the server is started again and asked once more
        (it died since)."""
        held_before = server.name in self and self._held[server.name].ready.done()
        try:
            client = await self.client(server, opener, keys)
            return await work(client)
        except BaseException as error:
            if answered(error):
                raise
            await asyncio.shield(self._end_soon(server.name))
            if not (again and held_before and isinstance(error, Exception)):
                raise
        log.info("MCP server %s no longer answered: started again", server.name)
        return await self.use(server, opener, work, answered, keys=keys)

    def _end_soon(self, name: str) -> asyncio.Task[None]:
        """End a server in a task of its own: it is ended even when the one that asked is
        cancelled meanwhile."""
        task = asyncio.get_running_loop().create_task(self.end(name))
        self._ending.add(task)
        task.add_done_callback(self._ending.discard)
        return task

    async def end(self, name: str) -> None:
        """End one server (its whole process tree, for a stdio one); at once if not held."""
        held = self._held.pop(name, None)
        if held is None:
            return
        held.stop.set()
        done, _pending = await asyncio.wait({held.task}, timeout=END_SECONDS)
        if not done:
            held.task.cancel()
            with contextlib.suppress(BaseException):
                await held.task

    async def close(self) -> None:
        """End every server held: the app or `ask` is ending."""
        await asyncio.gather(*(self.end(name) for name in list(self._held)), *self._ending)

    def __contains__(self, name: str) -> bool:
        held = self._held.get(name)
        return held is not None and held.alive
