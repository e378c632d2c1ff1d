"""SQL for the jobs table. Never commits; callers own the transactions."""

from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm
from memlet.db.pagination import Page, fetch_page
from memlet.jobs.schemas import ACTIVE_JOB_STATUSES


class JobRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def find(self, org_id: str, job_id: str) -> orm.Job | None:
        return await self.session.scalar(select(orm.Job).where(orm.Job.id == job_id, orm.Job.organization_id == org_id))

    async def list_jobs(
        self, org_id: str, *, job_type: str, statuses: Sequence[str] | None, page: Page
    ) -> list[orm.Job]:
        j = orm.Job
        stmt = select(j).where(j.organization_id == org_id, j.job_type == job_type)
        if statuses:
            stmt = stmt.where(j.status.in_(list(statuses)))
        return await fetch_page(self.session, stmt, page, sort_col=j.created_at, id_col=j.id)

    async def add(self, job: orm.Job) -> None:
        self.session.add(job)
        await self.session.flush()

    async def delete(self, job_id: str) -> None:
        await self.session.execute(delete(orm.Job).where(orm.Job.id == job_id))

    async def cancel(self, job_id: str) -> bool:
        """Mark an active job cancelled; False when it had already ended."""
        closed = await self.session.scalar(
            update(orm.Job)
            .where(orm.Job.id == job_id, orm.Job.status.in_(ACTIVE_JOB_STATUSES))
            .values(status="cancelled", completed_at=datetime.now(UTC), updated_at=datetime.now(UTC))
            .returning(orm.Job.id)
        )
        return closed is not None

    async def finish(self, job_id: str, status: str) -> orm.Job | None:
        """Close a job still active with `status`; the row when this call closed it, None otherwise (exactly once)."""
        return await self.session.scalar(
            update(orm.Job)
            .where(orm.Job.id == job_id, orm.Job.status.in_(ACTIVE_JOB_STATUSES))
            .values(status=status, completed_at=datetime.now(UTC), updated_at=datetime.now(UTC))
            .returning(orm.Job)
        )

    async def record_callback(
        self, job_id: str, *, sent_at: datetime, status_code: int | None, error: str | None
    ) -> None:
        await self.session.execute(
            update(orm.Job)
            .where(orm.Job.id == job_id)
            .values(callback_sent_at=sent_at, callback_status_code=status_code, callback_error=error)
        )

    async def idle_batches(self) -> list[str]:
        """Active batch jobs none of whose runs is still active (their driver stopped, or is about to finish)."""
        item, run = orm.BatchItem, orm.Run
        busy = (
            select(item.job_id)
            .join(run, run.id == item.run_id)
            .where(item.job_id == orm.Job.id, run.status.in_(("created", "running")))
            .exists()
        )
        stmt = select(orm.Job.id).where(orm.Job.job_type == "batch", orm.Job.status.in_(ACTIVE_JOB_STATUSES), ~busy)
        return list(await self.session.scalars(stmt))
