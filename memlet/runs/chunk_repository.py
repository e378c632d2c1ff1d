"""SQL for ``run_chunks``: the SSE chunks of streamed runs, appended in batches and read back by ``seq_id``.

Never commits; callers own the transactions.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ARRAY, Boolean, Integer, String, Table, Text, and_, bindparam, delete, func, or_, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm
from memlet.db.driver import DriverSQL, driver_of
from memlet.db.sql import any_of, array_rows

_CHUNKS: Table = orm.RunChunk.__table__  # type: ignore[assignment]
# Every streamed turn writes its log in a few batches and its background reader reads it back: statements built
# once and run on the driver (no ORM insert, one statement text for a batch of any size: the batch as arrays).
_BATCH = array_rows(
    seq_id=bindparam("seq_ids", type_=ARRAY(Integer)),
    data=bindparam("data", type_=ARRAY(Text)),
    final=bindparam("finals", type_=ARRAY(Boolean)),
)
_APPEND = DriverSQL(
    insert(_CHUNKS)
    .from_select(
        ["run_id", "seq_id", "data", "final"],
        select(bindparam("run_id", type_=String), _BATCH.c.seq_id, _BATCH.c.data, _BATCH.c.final),
    )
    .on_conflict_do_nothing()
)
_AFTER = DriverSQL(
    select(_CHUNKS.c.seq_id, _CHUNKS.c.data, _CHUNKS.c.final)
    .where(_CHUNKS.c.run_id == bindparam("run_id"), _CHUNKS.c.seq_id > bindparam("seq_id", type_=Integer))
    .order_by(_CHUNKS.c.seq_id)
    .limit(bindparam("limit", type_=Integer))
)


@dataclass(frozen=True)
class Chunk:
    seq_id: int
    data: str
    final: bool = False


class RunChunkRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def append(self, run_id: str, chunks: Sequence[Chunk]) -> None:
        """Insert a batch of chunks in one statement (a seq_id already stored is skipped, never rewritten)."""
        if not chunks:
            return
        driver = await driver_of(self.session)
        batch = {
            "run_id": run_id,
            "seq_ids": [c.seq_id for c in chunks],
            "data": [c.data for c in chunks],
            "finals": [c.final for c in chunks],
        }
        await driver.fetch(_APPEND, batch)

    async def after(self, run_id: str, seq_id: int, limit: int) -> list[Chunk]:
        """Up to `limit` chunks with a seq_id above `seq_id`, in order."""
        driver = await driver_of(self.session)
        rows = await driver.fetch(_AFTER, {"run_id": run_id, "seq_id": seq_id, "limit": limit})
        return [Chunk(seq_id=s, data=d, final=f) for s, d, f in rows]

    async def tail(self, run_id: str) -> tuple[int, bool]:
        """The last seq_id of the run's log (0 when empty) and whether its final chunk is stored."""
        c = orm.RunChunk
        row = (
            await self.session.execute(
                select(func.coalesce(func.max(c.seq_id), 0), func.coalesce(func.bool_or(c.final), False)).where(
                    c.run_id == run_id
                )
            )
        ).one()
        return int(row[0]), bool(row[1])

    async def last_seq_ids(self, run_ids: Sequence[str]) -> dict[str, int]:
        """The last stored seq_id of each of `run_ids` that has chunks (one statement for every followed run)."""
        c = orm.RunChunk
        rows = await self.session.execute(
            select(c.run_id, func.max(c.seq_id)).where(c.run_id == any_of(run_ids)).group_by(c.run_id)
        )
        return {run_id: int(seq_id) for run_id, seq_id in rows}

    async def between(self, ranges: dict[str, tuple[int, int]]) -> dict[str, list[Chunk]]:
        """For each run, its chunks with `low < seq_id <= high`, in order (one statement for many runs)."""
        c = orm.RunChunk
        wanted = [and_(c.run_id == run_id, c.seq_id > low, c.seq_id <= high) for run_id, (low, high) in ranges.items()]
        found: dict[str, list[Chunk]] = {run_id: [] for run_id in ranges}
        if wanted:
            rows = await self.session.execute(
                select(c.run_id, c.seq_id, c.data, c.final).where(or_(*wanted)).order_by(c.run_id, c.seq_id)
            )
            for run_id, seq_id, data, final in rows:
                found[run_id].append(Chunk(seq_id=seq_id, data=data, final=final))
        return found

    async def prune(self, before: datetime) -> int:
        """Delete every chunk written before `before`; returns how many."""
        result = await self.session.execute(delete(orm.RunChunk).where(orm.RunChunk.created_at < before))
        return int(result.rowcount or 0)  # type: ignore[attr-defined]
