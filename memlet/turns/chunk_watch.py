"""One poller per event loop for every reader following a run's chunk log.

A reader of ``run_chunks`` (``memlet.turns.resume.follow``) used to poll the table for its own run every 0.1 s and
the run's status every second: 1,000 idle SSE connections were 11,000 statements a second. Now each reader
registers a `ChunkWatch`; one poller per event loop reads, in one statement every `POLL_S`, the last seq_id of every
followed run. When runs grew by at most `FAN_OUT_MAX` chunks it reads those chunks once, in one more statement,
and hands them to every reader of the run (a hundred readers of one run cost one read, not a hundred); a reader
further behind reads its own batches. Once a second the poller reads the statuses of the followed runs, so a
reader notices a run that ended without a final chunk. Readers on other hosts see the same rows, so any process
can serve a resume. A writer in the same process hands its committed batches to the readers at once
(`delivered`), so a background stream read where it runs waits for no tick.
"""

import asyncio
import contextlib
from collections.abc import AsyncIterator

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet.db.engine import single_read
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

    def take(self) -> list[Chunk] | None:
        """The pending chunks after `last`, in order, if they follow it without a gap; None when there are none to
        take or one is missing (the reader reads the table). Chunks already read, or handed over twice (by the
        poller and by a local writer), are dropped: a handover of only such chunks is `[]`, nothing new (the
        reader's own read got there first), and needs no read."""
        pending, self.pending = self.pending, []
        if not pending:
            return None
        fresh: list[Chunk] = []
        following = self.last + 1
        for chunk in pending:
            if chunk.seq_id < following:
                continue
            if chunk.seq_id > following:
                return None
            fresh.append(chunk)
            following += 1
        return fresh

    async def wait(self, seconds: float | None) -> bool:
        """Until the poller sees new chunks or the run ended (True), or `seconds` pass (False)."""
        woken = False
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                woken = await self.wake.wait()
        self.wake.clear()
        return woken


class _Poller:
    """The watches of one event loop by run. A run's readers are looked at only when its log's last seq_id changed
    since the poll before, or it has a new reader: 1,000 idle readers cost a dictionary lookup per run a tick."""

    def __init__(self, maker: async_sessionmaker[AsyncSession]) -> None:
        self.maker = maker
        self.by_run: dict[str, set[ChunkWatch]] = {}
        self.seen: dict[str, int] = {}  # each run's last seq_id at the poll before
        self.fresh: set[str] = set()  # runs with a reader added since the poll before
        self.task: asyncio.Task[None] | None = None

    def add(self, watch: ChunkWatch) -> None:
        self.by_run.setdefault(watch.run_id, set()).add(watch)
        self.fresh.add(watch.run_id)
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._run())

    def discard(self, watch: ChunkWatch) -> None:
        watches = self.by_run.get(watch.run_id)
        if watches is not None:
            watches.discard(watch)
            if not watches:
                del self.by_run[watch.run_id]
                self.seen.pop(watch.run_id, None)

    async def _run(self) -> None:
        tick = 0
        while self.by_run:
            await asyncio.sleep(POLL_S)
            tick += 1
            try:
                await self._poll(check_status=tick % STATUS_EVERY == 0)
            except Exception:  # a failed poll is retried at the next tick; readers just wait a little longer
                log.warning("could not read the followed runs' chunk logs", exc_info=True)

    async def _poll(self, *, check_status: bool) -> None:
        run_ids = list(self.by_run)
        if not run_ids:
            return
        fresh, self.fresh = self.fresh, set()
        # Each read is one SELECT, atomic alone: autocommit spares the BEGIN and ROLLBACK around them, which were
        # most of an idle poll's cost (10 polls a second for any number of idle streams).
        async with single_read(self.maker) as session:
            chunks = RunChunkRepository(session)
            last = await chunks.last_seq_ids(run_ids)
            behind: dict[str, int] = {}
            for run_id, top in last.items():
                # Unchanged since the poll before, which woke every reader then behind: each reads on to there.
                if self.seen.get(run_id) == top and run_id not in fresh:
                    continue
                self.seen[run_id] = top
                low = min((w.last for w in self.by_run.get(run_id, ())), default=top)
                if top > low:
                    behind[run_id] = low
            shared = {r: (low, last[r]) for r, low in behind.items() if last[r] - low <= FAN_OUT_MAX}
            fetched = await chunks.between(shared) if shared else {}
            statuses = await RunRepository(session).statuses_of(run_ids) if check_status else None
        for run_id in behind:
            for watch in self.by_run.get(run_id, ()):
                if watch.last < last[run_id]:
                    watch.pending = [c for c in fetched.get(run_id, []) if c.seq_id > watch.last]
                    watch.wake.set()
        if statuses is not None:
            for run_id in run_ids:
                status = statuses.get(run_id)
                ended = status is None or status in TERMINAL_STATUSES
                for watch in self.by_run.get(run_id, ()):
                    watch.ended_checks = watch.ended_checks + 1 if ended else 0
                    if watch.ended_checks >= 2:  # the reader ends the stream itself if no final chunk comes
                        watch.wake.set()


_pollers: dict[tuple[asyncio.AbstractEventLoop, async_sessionmaker[AsyncSession]], _Poller] = {}


def delivered(run_id: str, chunks: list[Chunk]) -> None:
    """A writer in this process committed `chunks` (one batch, in order) to `run_id`'s log: hand them to this
    event loop's readers of the run at once, instead of at the poller's next tick (a background stream read in
    the process that runs it waits for no poll). Readers elsewhere still learn of them from their poller."""
    if not chunks:
        return
    loop = asyncio.get_running_loop()
    top = chunks[-1].seq_id
    for (owner, _), poller in _pollers.items():
        watches = poller.by_run.get(run_id) if owner is loop else None
        if not watches:
            continue
        for watch in watches:
            if watch.last < top:
                watch.pending.extend(chunks)
                watch.wake.set()
        # Every reader of the run is woken up to here: the next poll need not again.
        poller.seen[run_id] = max(poller.seen.get(run_id, 0), top)


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
        poller.discard(watch)
        if not poller.by_run:
            _pollers.pop(key, None)
