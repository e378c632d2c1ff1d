"""Jobs and batch jobs as the API shows them: list, retrieve, cancel, delete, and a batch's messages.

A batch job owns ordinary runs (one per request, linked by ``batch_items``). Cancelling the job cancels those
runs the way ``/v1/agents/{id}/messages/cancel`` does: a running loop stops at its next step boundary, and runs
not started yet are never started.
"""

from collections import defaultdict

from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.db import models as orm
from memlet.db.loaded import model_input
from memlet.db.pagination import Page
from memlet.errors import BadRequestError, NotFoundError
from memlet.jobs.item_repository import BatchItemRepository
from memlet.jobs.repository import JobRepository
from memlet.jobs.schemas import ACTIVE_JOB_STATUSES, BatchJob, Job, LettaBatchMessages
from memlet.loop.cancel import cancel_runs
from memlet.messages.repository import MessageRepository
from memlet.messages.schemas import StoredMessage


def check_job_id(job_id: str) -> None:
    """Job ids are plain strings on the batch routes; a malformed one is Letta's 400."""
    if not ids.is_valid(job_id, ids.Prefix.JOB):
        raise BadRequestError(
            f"INVALID_ARGUMENT: Invalid job ID format: {job_id}. Expected format: '{ids.Prefix.JOB.value}-<uuid4>'"
        )


class JobService:
    def __init__(self, session: AsyncSession, actor: Actor) -> None:
        self.session = session
        self.actor = actor
        self.jobs = JobRepository(session)
        self.items = BatchItemRepository(session)

    async def row(self, job_id: str) -> orm.Job:
        check_job_id(job_id)
        job = await self.jobs.find(self.actor.organization_id, job_id)
        if job is None:
            raise NotFoundError("Job", message=f"Job not found with identifier {job_id}")
        return job

    async def get(self, job_id: str) -> Job:
        return Job.model_validate(await self.row(job_id))

    async def list_jobs(self, page: Page, *, job_type: str = "job", active: bool = False) -> list[Job]:
        """Jobs of one type (``/v1/jobs`` lists ``job`` jobs only, as Letta: memlet creates none of them)."""
        return [Job.model_validate(r) for r in await self._page(page, job_type, active=active)]

    async def _page(self, page: Page, job_type: str, *, active: bool) -> list[orm.Job]:
        """One page of jobs of ``job_type`` (only created or running ones when ``active``), cursors checked first."""
        await self._check_cursors(page)
        statuses = ACTIVE_JOB_STATUSES if active else None
        return await self.jobs.list_jobs(self.actor.organization_id, job_type=job_type, statuses=statuses, page=page)

    async def _check_cursors(self, page: Page) -> None:
        """As Letta: each cursor must name a job (of any type; ``before`` is looked up first), else a 400, and
        ``before`` may not name a job older than ``after``'s."""
        found: list[orm.Job] = []
        for cursor in (page.before, page.after):
            if cursor:
                job = await self.jobs.find(self.actor.organization_id, cursor)
                if job is None:
                    raise BadRequestError(f"Job with id {cursor} not found")
                found.append(job)
        if page.before and page.after:
            before, after = found
            if (before.created_at, before.id) < (after.created_at, after.id):
                raise BadRequestError("'before' reference must be later than 'after' reference")

    async def cancel(self, job_id: str) -> Job:
        """Cancel an active job and its runs; an ended job is answered unchanged (Letta answered a 500)."""
        job = await self.row(job_id)
        if await self.jobs.cancel(job.id):
            await self._cancel_runs(job.id)
            await self.session.refresh(job)
        return Job.model_validate(job)

    async def _cancel_runs(self, job_id: str) -> None:
        by_agent: dict[str, list[str]] = defaultdict(list)
        for item in await self.items.of_job(job_id):
            by_agent[item.agent_id].append(item.run_id)
        # cancel_runs leaves ended runs as they are, and denies the pending approval of one that stopped for it.
        for agent_id, run_ids in by_agent.items():
            await cancel_runs(self.session, agent_id, run_ids)

    async def delete(self, job_id: str) -> Job:
        """Delete the job (its batch items go with it; the runs and their messages stay). A missing one is a 404
        with Letta's delete text, not the retrieve one."""
        check_job_id(job_id)
        row = await self.jobs.find(self.actor.organization_id, job_id)
        if row is None:
            raise NotFoundError("Job", message=f"Job with id {job_id} does not exist or user does not have access")
        job = Job.model_validate(row)
        await self.jobs.delete(job_id)
        return job

    # --- the batch views of the same rows ---

    async def get_batch(self, batch_id: str) -> BatchJob:
        return BatchJob.model_validate(await self.row(batch_id))

    async def list_batches(self, page: Page) -> list[BatchJob]:
        """Active batches only, as Letta: finished, failed and cancelled batches are not listed. Cursors are checked
        as on ``/v1/jobs`` (Letta's batch list is its job list): each must name a job, of any type or status."""
        return [BatchJob.model_validate(r) for r in await self._page(page, "batch", active=True)]

    async def cancel_batch(self, batch_id: str) -> None:
        await self.cancel(batch_id)

    async def batch_messages(self, batch_id: str, page: Page, agent_id: str | None) -> LettaBatchMessages:
        """The stored messages of the batch's runs (inputs and replies), as raw ``Message`` objects."""
        job = await self.row(batch_id)
        run_ids = await self.items.run_ids(job.id, agent_id)
        rows = await MessageRepository(self.session).page_for_runs(run_ids, page)
        return LettaBatchMessages(messages=[StoredMessage.model_validate(model_input(r)) for r in rows])
