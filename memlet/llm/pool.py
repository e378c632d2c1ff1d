"""A bounded cache of open LLM clients that closes the ones it drops, but never while a request uses them.

Clients are keyed by what makes them differ (endpoint type, URL, key), so requests to one endpoint share HTTP
connections. Users choose endpoints, so the cache is a least-recently-used map of at most `capacity` entries.
A caller holds a lease (`async with pool.lease(key, build) as client`) for as long as it uses the client; an
evicted client is closed at once when nobody holds it, else when its last lease ends.
"""

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Hashable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from memlet.log import get_logger

log = get_logger("llm.pool")


class Closable(Protocol):
    async def aclose(self) -> None: ...


C = TypeVar("C", bound=Closable)


@dataclass
class _Entry(Generic[C]):
    client: C
    leases: int = 0
    evicted: bool = False


class ClientPool(Generic[C]):
    """At most `capacity` open clients; the least recently leased one is closed first."""

    def __init__(self, capacity: int) -> None:
        self.capacity = max(1, capacity)
        self._entries: OrderedDict[Hashable, _Entry[C]] = OrderedDict()
        self._closing: set[asyncio.Task[None]] = set()

    def __len__(self) -> int:
        return len(self._entries)

    @contextlib.asynccontextmanager
    async def lease(self, key: Hashable, build: Callable[[], C]) -> AsyncIterator[C]:
        """The client for `key` (built on first use), held open until the block ends."""
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _Entry(build())
            self._evict()
        else:
            self._entries.move_to_end(key)
        entry.leases += 1
        try:
            yield entry.client
        finally:
            entry.leases -= 1
            if entry.evicted and entry.leases == 0:
                self._close(entry)

    def _evict(self) -> None:
        while len(self._entries) > self.capacity:
            _, old = self._entries.popitem(last=False)
            old.evicted = True
            if old.leases == 0:
                self._close(old)

    def _close(self, entry: _Entry[C]) -> None:
        # In a task: a lease may end inside a cancelled request, where awaiting the close could be cut short.
        task = asyncio.get_running_loop().create_task(_close_quietly(entry.client))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def aclose(self) -> None:
        """Close every client (at shutdown)."""
        entries = list(self._entries.values())
        self._entries.clear()
        await asyncio.gather(*(_close_quietly(e.client) for e in entries), *list(self._closing))


async def _close_quietly(client: Closable) -> None:
    try:
        await client.aclose()
    except Exception as exc:  # a client that fails to close must not fail the request that evicted it
        log.warning("closing an LLM client failed: %r", exc)
