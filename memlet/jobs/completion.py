"""Closing a batch job once none of its runs is active, and POSTing its ``callback_url`` (exactly once).

The batch's driver calls ``finish_batch`` when its last run ends. ``finish_idle_batches`` (the run worker's sweep)
closes batches whose driver is gone: a server that stopped mid-batch has its runs closed by the run sweep, and
then its batch here. Both close the job with one guarded UPDATE, so only one of them ever calls back.

Status: ``failed`` when any of the batch's runs failed, else ``completed``; a cancelled batch stays cancelled and
does not call back (as in Letta). The callback body is Letta's: ``{"job_id", "status", "completed_at"}``.
"""

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet.db import models as orm
from memlet.jobs.item_repository import BatchItemRepository
from memlet.jobs.repository import JobRepository
from memlet.log import get_logger
from memlet.net.outbound import OutboundPolicy
from memlet.runs.callbacks import naive_iso, post_callback

log = get_logger("jobs.completion")


def batch_callback_payload(job: orm.Job) -> dict[str, Any]:
    return {"job_id": job.id, "status": job.status, "completed_at": naive_iso(job.completed_at)}


async def finish_batch(maker: async_sessionmaker[AsyncSession], job_id: str, *, policy: OutboundPolicy) -> bool:
    """Close the batch if it is still active and call back; True when this call closed it. Never raises."""
    try:
        async with maker() as session, session.begin():
            outcome = await BatchItemRepository(session).outcome(job_id)
            job = await JobRepository(session).finish(job_id, "failed" if outcome.failed else "completed")
            if job is None:
                return False
            url, payload = job.callback_url, batch_callback_payload(job)
        if url:
            # Outside any transaction: a slow receiver holds no database connection.
            sent = await post_callback(url, payload, run_id=job_id, policy=policy, subject="job")
            async with maker() as session, session.begin():
                await JobRepository(session).record_callback(
                    job_id, sent_at=sent.sent_at, status_code=sent.status_code, error=sent.error
                )
        return True
    except Exception:
        log.exception("closing batch %s failed", job_id)
        return False


async def finish_idle_batches(maker: async_sessionmaker[AsyncSession], *, policy: OutboundPolicy) -> list[str]:
    """Close every active batch none of whose runs is active any more; returns the closed ids."""
    async with maker() as session:
        idle = await JobRepository(session).idle_batches()
    return [job_id for job_id in idle if await finish_batch(maker, job_id, policy=policy)]
