"""The chunk log of a streamed run: every SSE chunk numbered 1, 2, 3 ... (`seq_id`) and appended to ``run_chunks``.

A background stream's chunks also show their number: it is written into the chunk's ``"seq_id":null`` field, as
Letta does for background streams, so a client can resume after it (stop_reason, usage and error chunks have no
such field and are numbered silently). A plain stream's chunks keep ``seq_id: null``, as Letta's do. Chunks are appended in
batches so a token stream is not one INSERT per token: a chunk arriving after a quiet spell (no write for
``FLUSH_DELAY_S``, e.g. the first ping) is written at once; otherwise a batch is written when it holds
``FLUSH_CHUNKS`` chunks or ``FLUSH_DELAY_S`` after its first chunk; the final ``[DONE]`` is written at once. Batches are written in order by one
writer per run, so a reader polling ``seq_id > last`` never sees a gap.
"""

import asyncio
import contextlib
import time
from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet.db.engine import single_statement
from memlet.log import get_logger, log_fields
from memlet.messages.schemas import LettaErrorMessage
from memlet.runs.chunk_repository import Chunk, RunChunkRepository
from memlet.turns.chunk_watch import delivered
from memlet.turns.streaming import DONE, sse, sse_error, stop_reason

log = get_logger("turns.chunk_log")

FLUSH_CHUNKS = 50
FLUSH_DELAY_S = 0.05
# Letta keeps a run's stream for 3 hours; older runs cannot be resumed (410).
RETENTION = timedelta(hours=3)


def numbered(chunk: str, seq_id: int) -> str:
    return chunk.replace('"seq_id":null', f'"seq_id":{seq_id}', 1)


class ChunkLog:
    """Numbers one run's chunks and appends them to the log in batches (one instance per run, one writer)."""

    def __init__(
        self, maker: async_sessionmaker[AsyncSession], run_id: str, last_seq: int = 0, *, shown: bool = True
    ) -> None:
        self.maker = maker
        self.run_id = run_id
        self.seq = last_seq
        self.shown = shown  # whether the chunks' text shows their seq_id (background streams)
        self.final_written = False
        self._buffer: list[Chunk] = []
        self._lock = asyncio.Lock()
        self._timer: asyncio.Task[None] | None = None
        self._flushed_at = 0.0
        self._writes: set[asyncio.Task[None]] = set()  # `append`'s writes in flight

    def _queue(self, chunk: str) -> tuple[str, bool]:
        """Number `chunk` and buffer it; returns it as shown, and whether the buffer is due to be written now
        (the final chunk, one after a quiet spell, a full batch)."""
        self.seq += 1
        text = numbered(chunk, self.seq) if self.shown else chunk
        final = chunk == DONE
        self._buffer.append(Chunk(seq_id=self.seq, data=text, final=final))
        quiet = len(self._buffer) == 1 and time.monotonic() - self._flushed_at >= FLUSH_DELAY_S
        return text, final or quiet or len(self._buffer) >= FLUSH_CHUNKS

    async def write(self, chunk: str) -> str:
        """Number `chunk`, log it (at once when it is due, else within `FLUSH_DELAY_S`) and return it as shown."""
        text, due = self._queue(chunk)
        if due:
            await self.flush()
        else:
            self._flush_later()
        return text

    def append(self, chunk: str) -> str:
        """`write` without waiting for the database: the write runs in a task of its own (in order: each batch
        waits for the one before), so whoever hands the chunk on (a live reader) never waits for the log.
        `close()` waits for every such write."""
        text, due = self._queue(chunk)
        if due:
            task = asyncio.create_task(self.flush(), name=f"chunk write {self.run_id}")
            self._writes.add(task)
            task.add_done_callback(self._writes.discard)
        else:
            self._flush_later()
        return text

    def _flush_later(self) -> None:
        if self._timer is None:
            self._timer = asyncio.create_task(self._flush_soon(), name=f"chunk flush {self.run_id}")

    async def _flush_soon(self) -> None:
        await asyncio.sleep(FLUSH_DELAY_S)
        self._timer = None
        await self.flush()

    async def flush(self) -> None:
        async with self._lock:
            batch, self._buffer = self._buffer, []
            self._flushed_at = time.monotonic()
            if not batch:
                return
            try:
                # One INSERT, atomic by itself: in autocommit, no BEGIN and COMMIT round trips around it.
                async with single_statement(self.maker) as session:
                    await RunChunkRepository(session).append(self.run_id, batch)
            except Exception:
                log.exception("could not append stream chunks", extra=log_fields(run_id=self.run_id))
                return
            self.final_written = self.final_written or batch[-1].final
            delivered(self.run_id, batch)

    async def close(self) -> None:
        """Write what is buffered (the run's stream ended)."""
        if self._timer is not None:
            self._timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._timer
            self._timer = None
        if self._writes:
            await asyncio.gather(*self._writes)
        await self.flush()


def ending_error(run_id: str, message: str, error_type: str = "internal_error") -> LettaErrorMessage:
    """The error of a run that stopped without its own ending (its stream's last error, its ``metadata.error``)."""
    return LettaErrorMessage(run_id=run_id, error_type=error_type, message=message, detail=message)


def error_tail(run_id: str, message: str, error_type: str = "internal_error") -> list[str]:
    """The chunks that end a stream whose run stopped without its own ending: stop reason, error, [DONE]."""
    return [sse(stop_reason("error")), sse_error(ending_error(run_id, message, error_type)), DONE]


async def end_log(maker: async_sessionmaker[AsyncSession], run_id: str, message: str) -> bool:
    """Give a run's chunk log its terminal chunks if it has a log without them (a run closed by the lease sweep
    or at shutdown). Returns whether chunks were written."""
    async with maker() as session:
        last, final = await RunChunkRepository(session).tail(run_id)
    if last == 0 or final:
        return False
    chunks = ChunkLog(maker, run_id, last_seq=last)
    for chunk in error_tail(run_id, message):
        await chunks.write(chunk)
    await chunks.close()
    return True


async def prune(maker: async_sessionmaker[AsyncSession]) -> int:
    """Delete chunk logs older than the retention (the run worker calls this periodically)."""
    async with maker() as session, session.begin():
        return await RunChunkRepository(session).prune(datetime.now(UTC) - RETENTION)
