"""One poller per event loop for every reader following a run's chunk log.

A reader of ``run_chunks`` (``memlet.turns.resume.follow``) used to poll the table for its own run every 0.1 s and
the run's status every second: 1,000 idle SSE connections were 11,000 statements a second. Now each reader
registers a `ChunkWatch`; one poller per event loop reads, in one statement every `POLL_S`, the last seq_id of every
followed run. When runs grew by at most `FAN_OUT_MAX` chunks it reads those chunks once, in one more statement,
and hands them to every reader of the run (a hundred readers of one run cost one read, not a hundred); a reader
further behind reads its own batches. Once a second the poller reads the statuses of the followed runs, so a
reader notices a run that ended without a final chunk. Readers on other hosts see the same rows, so any process
can serve a resume.
"""

import asyncio
import contextlib
from collections.abc import AsyncIterator

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet.log import get_logger
from memlet.runs.chunk_repository import Chunk, RunChunkRepository
from memlet.runs.repository import TERMINAL_STATUSES, RunRepository

POLL_S = 0.1
FAN_OUT_MAX = 100  # new chunks of a run the poller reads for its readers; beyond, each reader reads its own
STATUS_EVERY = 10  # polls between two reads of the runs' statuses (1 s)

log = get_logger("turns.chunk_watch")


class ChunkWatch:
    """One reader's view of its run: the last seq_id it has read, and how many status reads in a row found the
    run ended (reset when the reader gets chunks)."""

    def __init__(self, run_id: str, last: int) -> None:
        self.run_id = run_id
        self.last = last
        self.ended_checks = 0
        self.wake = asyncio.Event()
        self.pending: list[Chunk] = []  # chunks the poller read for this reader, in order

    def take(self) -> list[Chunk]:
        """The pending chunks if they follow `last` without a gap (else none: the reader reads the table)."""
        pending, self.pending = self.pending, []
        fresh = [c for c in pending if c.seq_id > self.last]
        if fresh and fresh[0].seq_id == self.last + 1:
            return fresh
        return []

    async def wait(self, seconds: float | None) -> bool:
        """Until the poller sees new chunks or the run ended (True), or `seconds` pass (False)."""
        woken = False
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                woken = await self.wake.wait()
        self.wake.clear()
        return woken


class _Poller:
    def __init__(self, maker: async_sessionmaker[AsyncSession]) -> None:
        self.maker = maker
        self.watches: set[ChunkWatch] = set()
        self.task: asyncio.Task[None] | None = None

    def add(self, watch: ChunkWatch) -> None:
        self.watches.add(watch)
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        tick = 0
        while self.watches:
            await asyncio.sleep(POLL_S)
            tick += 1
            try:
                await self._poll(check_status=tick % STATUS_EVERY == 0)
            except Exception:  # a failed poll is retried at the next tick; readers just wait a little longer
                log.warning("could not read the followed runs' chunk logs", exc_info=True)

    async def _poll(self, *, check_status: bool) -> None:
        watches = list(self.watches)
        run_ids = list({w.run_id for w in watches})
        if not run_ids:
            return
        async with self.maker() as session:
            chunks = RunChunkRepository(session)
            last = await chunks.last_seq_ids(run_ids)
            behind: dict[str, int] = {}
            for watch in watches:
                if last.get(watch.run_id, 0) > watch.last:
                    behind[watch.run_id] = min(behind.get(watch.run_id, watch.last), watch.last)
            shared = {r: (low, last[r]) for r, low in behind.items() if last[r] - low <= FAN_OUT_MAX}
            fetched = await chunks.between(shared) if shared else {}
            statuses = await RunRepository(session).statuses_of(run_ids) if check_status else None
        for watch in watches:
            if watch.run_id in behind:
                watch.pending = [c for c in fetched.get(watch.run_id, []) if c.seq_id > watch.last]
                watch.wake.set()
            if statuses is not None:
                status = statuses.get(watch.run_id)
                ended = status is None or status in TERMINAL_STATUSES
                watch.ended_checks = watch.ended_checks + 1 if ended else 0
                if watch.ended_checks >= 2:  # the reader ends the stream itself if no final chunk comes
                    watch.wake.set()


_pollers: dict[tuple[asyncio.AbstractEventLoop, async_sessionmaker[AsyncSession]], _Poller] = {}


@contextlib.asynccontextmanager
async def watching(maker: async_sessionmaker[AsyncSession], run_id: str, last: int) -> AsyncIterator[ChunkWatch]:
    """A watch on `run_id`'s chunk log for as long as the block runs."""
    key = (asyncio.get_running_loop(), maker)
    poller = _pollers.get(key)
    if poller is None:
        poller = _pollers[key] = _Poller(maker)
    watch = ChunkWatch(run_id, last)
    poller.add(watch)
    try:
        yield watch
    finally:
        poller.watches.discard(watch)
        if not poller.watches:
            _pollers.pop(key, None)
