"""``POST /v1/messages/batches``: every request of a batch is an ordinary turn of memlet's own loop, any provider.

Letta 0.16.8 sent a batch to Anthropic's batch API only (500 and a failed job for any other provider), and only
with polling turned on. Here, create checks every request (agents exist, ``override_model`` resolves, inputs are
not empty, the callback URL passes the outbound policy), then writes the job, one run per request (status
``created``) and the batch items in one transaction, and answers at once. A driver task then runs the requests:
the requests of one agent one after another (an agent takes one turn at a time), different agents in parallel,
each run waiting for a free turn slot of this worker. When the last run ends, the job is closed and its
``callback_url`` called (``memlet.jobs.completion``).
"""

import asyncio
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from memlet import ids
from memlet.db import models as orm
from memlet.errors import BadRequestError, ShuttingDownError
from memlet.jobs.completion import finish_batch
from memlet.jobs.item_repository import BatchItemRepository
from memlet.jobs.repository import JobRepository
from memlet.jobs.schemas import BatchJob, CreateBatch, LettaBatchRequest
from memlet.log import get_logger
from memlet.messages.requests import ensure_messages
from memlet.net.outbound import policy_for
from memlet.runs.repository import RunRepository
from memlet.turns.sending import SendService

log = get_logger("turns.batches")

BATCH_RUN_TYPE = "batch_message"


@dataclass
class _Request:
    agent_id: str
    run: orm.Run
    req: LettaBatchRequest
    llm_override: dict[str, Any] | None


class BatchService:
    def __init__(self, send: SendService) -> None:
        self.send = send
        self.deps = send.deps
        self.actor = send.actor
        self.turns = send.turns
        self.policy = policy_for(self.deps.settings)

    async def create(self, body: CreateBatch) -> BatchJob:
        """Check the batch, write it, start its driver; the job comes back ``running``."""
        if not body.requests:
            raise BadRequestError("INVALID_ARGUMENT: A batch needs at least one request.")
        callback_url = str(body.callback_url) if body.callback_url is not None else None
        if callback_url:
            await self.policy.check_url(callback_url, "callback_url")
        for req in body.requests:
            ensure_messages(req)
        for agent_id in dict.fromkeys(r.agent_id for r in body.requests):
            await self.send.agent_type(agent_id)  # 404 for an unknown agent, before anything is written
        overrides = [await self.send.model_override(req) for req in body.requests]
        job = orm.Job(
            id=ids.new_id(ids.Prefix.JOB),
            organization_id=self.actor.organization_id,
            job_type="batch",
            status="running",
            metadata_={"job_type": "batch_messages"},
            background=False,
            callback_url=callback_url,
            created_by_id=self.actor.user_id,
            last_updated_by_id=self.actor.user_id,
        )
        plan = [self._plan(job.id, req, override) for req, override in zip(body.requests, overrides, strict=True)]
        run_ids = [p.run.id for p in plan]
        self.turns.hold(run_ids)  # this worker vouches for the runs from the moment they exist
        try:
            await self._write(job, plan)
        except BaseException:
            for run_id in run_ids:
                self.turns.release(run_id)
            raise
        self.turns.start_driver(job.id, self._drive(job.id, plan))
        return BatchJob.model_validate(job)

    def _plan(self, job_id: str, req: LettaBatchRequest, override: dict[str, Any] | None) -> _Request:
        metadata = {"run_type": BATCH_RUN_TYPE, "batch_id": job_id}
        run = self.send.new_run(ids.new_id(ids.Prefix.RUN), req.agent_id, req, metadata, background=True)
        return _Request(req.agent_id, run, req, override)

    async def _write(self, job: orm.Job, plan: list[_Request]) -> None:
        async with self.deps.sessionmaker() as session, session.begin():
            await JobRepository(session).add(job)
            runs = RunRepository(session)
            for item in plan:
                await runs.add(item.run)
            items = [
                orm.BatchItem(
                    job_id=job.id,
                    position=i,
                    run_id=p.run.id,
                    agent_id=p.agent_id,
                    request=p.req.model_dump(mode="json", exclude_none=True),
                )
                for i, p in enumerate(plan)
            ]
            await BatchItemRepository(session).add(items)

    async def _drive(self, job_id: str, plan: list[_Request]) -> None:
        by_agent: dict[str, list[_Request]] = defaultdict(list)
        for item in plan:
            by_agent[item.agent_id].append(item)
        try:
            await asyncio.gather(*(self._run_in_order(items) for items in by_agent.values()))
        except ShuttingDownError:
            return  # the worker closes the runs it still holds; a later sweep closes the batch
        except Exception:
            log.exception("batch %s stopped early", job_id)
        await finish_batch(self.deps.sessionmaker, job_id, policy=self.policy)

    async def _run_in_order(self, items: list[_Request]) -> None:
        for item in items:
            if await self._status(item.run.id) != "created":  # cancelled (with its batch) before it started
                self.turns.release(item.run.id)
                continue
            await self.turns.acquire(item.run.id)
            await self.send.run_to_end(item.agent_id, item.run, item.req, item.llm_override)

    async def _status(self, run_id: str) -> str | None:
        async with self.deps.sessionmaker() as session:
            return await RunRepository(session).status_of(run_id)
