"""SQL for ``queued_runs``: runs waiting for a worker (see `memlet.db.models.queued_run`). Never commits."""

from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from memlet.db import models as orm
from memlet.runs.repository import ACTIVE_RUN_STATUSES, lease_deadline

Q = orm.QueuedRun


class QueuedRunRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def for_agent(self, agent_id: str) -> orm.QueuedRun | None:
        """The agent's queued run, locked until the caller's transaction ends (it may join more work to it)."""
        return await self.session.scalar(select(Q).where(Q.agent_id == agent_id).with_for_update())

    async def add(self, run: orm.Run, *, kind: str, payload: dict[str, Any]) -> orm.QueuedRun:
        """Insert the run (status created, no worker) and queue it."""
        self.session.add(run)
        await self.session.flush()
        row = Q(
            run_id=run.id,
            agent_id=run.agent_id,
            organization_id=run.organization_id,
            created_by_id=run.created_by_id,
            kind=kind,
            payload=payload,
        )
        self.session.add(row)
        await self.session.flush()
        return row

    async def set_payload(self, run_id: str, payload: dict[str, Any]) -> None:
        await self.session.execute(update(Q).where(Q.run_id == run_id).values(payload=payload))

    async def any_queued(self) -> bool:
        """Whether any run waits in the queue (a cheap check before a claim takes a turn slot)."""
        return bool(await self.session.scalar(select(select(Q.run_id).exists())))

    async def claim(self, worker_id: str, lease_s: float) -> orm.QueuedRun | None:
        """Take the oldest queued run whose agent has no run in flight: unqueue it and lease it to `worker_id`.

        ``SKIP LOCKED`` lets several workers claim at once without taking the same run twice.
        """
        other = aliased(Q)
        busy = (
            select(orm.Run.id)
            .where(
                orm.Run.agent_id == Q.agent_id,
                orm.Run.status.in_(ACTIVE_RUN_STATUSES),
                orm.Run.id.not_in(select(other.run_id)),
            )
            .exists()
        )
        row = await self.session.scalar(
            select(Q).where(~busy).order_by(Q.created_at).limit(1).with_for_update(of=Q, skip_locked=True)
        )
        if row is None:
            return None
        await self.session.execute(delete(Q).where(Q.run_id == row.run_id))
        await self.session.execute(
            update(orm.Run)
            .where(orm.Run.id == row.run_id, orm.Run.status == "created")
            .values(worker_id=worker_id, lease_expires_at=lease_deadline(lease_s))
        )
        return row
