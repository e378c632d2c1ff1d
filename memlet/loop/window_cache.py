"""A thread's in-context rows and their chat conversion, kept in the process between turns.

Every turn reads its whole window (the agent's `message_ids`, or a conversation's), and converting and decoding
those rows was the part of a turn's cost that grows with the buffer (~7 us of CPU and ~3.5 us of Postgres per row
per turn, measured with 1,000 rows). A `WindowCache` keeps, per thread (an agent's own, or a conversation), the rows
its last load returned, each with the `xmin` of the row version it was read from, and the thread's `BufferChat`.
The next load passes those `xmin`s and gets back only the rows whose version changed
(`MessageRepository.revalidate`). An unchanged row is the very same `MessageRow` object, so the `BufferChat`
reuses its conversion and converts only what is new.

Nothing here is trusted without the database: any writer's UPDATE of a message (another worker's turn, a memory
edit's system prompt, an approval, a hand-made SQL edit) makes a new row version with a new `xmin`, and a deleted
row is not found. So several workers, or hosts, each keep their own cache of the same threads and none can read a
stale row. The rows are immutable tuples; their content (lists and dicts) is shared and never modified by the loop,
like the chat messages (see `BufferChat`).

Bounded by memory (`Settings.context_cache_mb`, each row's size estimated by `row_size` when it is read): the least
recently loaded threads go first, and deleting an agent drops its threads (`forget_agent`); a load begun before the
deletion does not put them back (`memlet/forgotten.py`). A turn holds its thread's lock while it uses the thread's
entry, so one entry is never used by two turns at once.
"""

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import orjson

from memlet.db.message_row import MessageRow
from memlet.forgotten import Forgotten
from memlet.loop.buffer_chat import BufferChat
from memlet.messages.repository import MessageRepository
from memlet.messages.window_sql import UNSEEN


@dataclass
class ThreadWindow:
    """One thread's rows by id, each with the `xmin` it was read at and its estimated size, and its converted
    buffer."""

    rows: dict[str, tuple[int, MessageRow, int]] = field(default_factory=dict)
    chat: BufferChat = field(default_factory=BufferChat)
    size: int = 0  # bytes, estimated (`row_size`)
    agent_id: str = ""


class WindowCache:
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._threads: OrderedDict[str, ThreadWindow] = OrderedDict()
        self._size = 0
        self.rows_read = 0  # rows whose columns the loads read (for tests and benchmarks)
        self.deleted = Forgotten()

    def thread(self, key: str) -> ThreadWindow:
        """The thread's entry (a new, empty one when it has none), now the most recently used."""
        entry = self._threads.get(key)
        if entry is None:
            entry = ThreadWindow()
        else:
            self._threads.move_to_end(key)
        return entry

    async def load(
        self, repo: MessageRepository, key: str, agent_id: str, window: Sequence[str]
    ) -> tuple[list[MessageRow], BufferChat]:
        """The window's rows in order (ids with no row of the agent left out, as `MessageRepository.in_context`),
        read through the thread's entry, which then holds exactly them; and the thread's `BufferChat`."""
        entry = self.thread(key)
        entry.agent_id = agent_id
        held = entry.rows
        since = self.deleted.now()
        found = await repo.revalidate(agent_id, window, [held.get(i, _NOT_HELD)[0] for i in window])
        differs = {index: (version, row) for index, version, row in found}
        rows: list[MessageRow] = []
        kept: dict[str, tuple[int, MessageRow, int]] = {}
        size = 0
        for index, message_id in enumerate(window):
            if (read := differs.get(index)) is None:
                version, row, bytes_ = held[message_id]  # the held version is the stored one
            else:
                stored_version, stored = read
                if stored_version is None or stored is None:
                    continue  # no row of the agent
                version, row, bytes_ = stored_version, stored, row_size(stored)
                self.rows_read += 1
            rows.append(row)
            kept[message_id] = (version, row, bytes_)
            size += bytes_
        if not self.deleted.since(agent_id, since):
            self._store(key, entry, kept, size)
        return rows, entry.chat

    def _store(self, key: str, entry: ThreadWindow, rows: dict[str, tuple[int, MessageRow, int]], size: int) -> None:
        if key in self._threads:
            self._size -= self._threads.pop(key).size
        if size > self.max_bytes:
            return  # a thread larger than the whole cache is read in full every turn
        entry.rows, entry.size = rows, size
        self._threads[key] = entry
        self._size += size
        while self._size > self.max_bytes:
            _, evicted = self._threads.popitem(last=False)
            self._size -= evicted.size

    def __contains__(self, key: object) -> bool:
        """Whether the cache holds the thread (an agent's id for its own, a conversation's id)."""
        return key in self._threads

    def forget_agent(self, agent_id: str) -> None:
        """Drop every thread of the agent (it was deleted): its own and its conversations'; a load begun before now
        keeps none of them."""
        self.deleted.forget(agent_id)
        for key in [k for k, entry in self._threads.items() if entry.agent_id == agent_id]:
            self._size -= self._threads.pop(key).size

    @property
    def size(self) -> int:
        """The estimated bytes of the rows the cache holds."""
        return self._size

    def __len__(self) -> int:
        """How many rows the cache holds."""
        return sum(len(entry.rows) for entry in self._threads.values())


ROW_OVERHEAD = 1024  # a `MessageRow`'s tuple, ids, timestamps and its converted chat message, roughly


def row_size(row: MessageRow) -> int:
    """The memory a held row takes, estimated: its JSON columns' encoded length (a tool return may be large), again
    for its message's encoded JSON in the request (`BufferChat.wire`), plus a fixed share for the rest and for its
    chat conversion, which mostly shares the row's strings."""
    return ROW_OVERHEAD + 2 * len(orjson.dumps((row.content, row.tool_calls, row.tool_returns, row.approvals)))


_NOT_HELD: tuple[int, None, int] = (UNSEEN, None, 0)
