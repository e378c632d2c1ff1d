"""SQL for the batch_items table: which runs carry out a batch's requests. Never commits."""

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm


@dataclass(frozen=True)
class RunOutcome:
    """How many of a batch's runs ended in each status."""

    counts: dict[str, int]

    @property
    def failed(self) -> bool:
        return self.counts.get("failed", 0) > 0


class BatchItemRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def add(self, items: Sequence[orm.BatchItem]) -> None:
        self.session.add_all(list(items))
        await self.session.flush()

    async def of_job(self, job_id: str) -> list[orm.BatchItem]:
        rows = await self.session.scalars(
            select(orm.BatchItem).where(orm.BatchItem.job_id == job_id).order_by(orm.BatchItem.position)
        )
        return list(rows)

    async def run_ids(self, job_id: str, agent_id: str | None = None) -> list[str]:
        stmt = select(orm.BatchItem.run_id).where(orm.BatchItem.job_id == job_id)
        if agent_id is not None:
            stmt = stmt.where(orm.BatchItem.agent_id == agent_id)
        return list(await self.session.scalars(stmt.order_by(orm.BatchItem.position)))

    async def outcome(self, job_id: str) -> RunOutcome:
        rows = await self.session.execute(
            select(orm.Run.status, func.count())
            .join(orm.BatchItem, orm.BatchItem.run_id == orm.Run.id)
            .where(orm.BatchItem.job_id == job_id)
            .group_by(orm.Run.status)
        )
        return RunOutcome({str(status): int(n) for status, n in rows.tuples()})
