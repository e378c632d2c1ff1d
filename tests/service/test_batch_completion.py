"""Closing batch jobs whose driver is gone (a server stopped mid-batch): the worker's sweep closes a batch once
none of its runs is active, exactly once, and leaves cancelled and still-busy batches alone."""

import asyncio
from collections.abc import Iterator

import pytest
from sqlalchemy import select
from sqlalchemy.engine import make_url

from memlet import ids, migrations
from memlet.config import Settings
from memlet.db import models as orm
from memlet.db.embedded import EmbeddedPostgres
from memlet.jobs.completion import finish_batch, finish_idle_batches
from memlet.net.outbound import OutboundPolicy
from tests.service.loop_factories import LoopEnv, loop_env

__all__ = ["loop_env"]

POLICY = OutboundPolicy()


@pytest.fixture(scope="module")
def settings(settings: Settings, embedded_pg: EmbeddedPostgres, pg_uri: str) -> Iterator[Settings]:
    """A database of its own: the live server's sweep would close the planted batches first."""
    name = "memlet_batch_completion"
    embedded_pg.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE); CREATE DATABASE "{name}";')
    uri = make_url(pg_uri).set(database=name).render_as_string(hide_password=False)
    asyncio.run(migrations.upgrade(uri))
    yield settings.model_copy(update={"pg_uri": uri})
    embedded_pg.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE);')


async def plant(env: LoopEnv, run_statuses: list[str], job_status: str = "running") -> str:
    """A batch job with one run per status (all for one agent)."""
    agent = await env.agent()
    job_id = ids.new_id(ids.Prefix.JOB)
    async with env.sessionmaker() as session, session.begin():
        session.add(orm.Job(id=job_id, organization_id=agent.organization_id, job_type="batch", status=job_status))
        await session.flush()
        for position, status in enumerate(run_statuses):
            run_id = ids.new_id(ids.Prefix.RUN)
            session.add(
                orm.Run(id=run_id, agent_id=agent.id, organization_id=agent.organization_id, status=status, num_steps=0)
            )
            await session.flush()
            session.add(orm.BatchItem(job_id=job_id, position=position, run_id=run_id, agent_id=agent.id, request={}))
    return job_id


async def status_of(env: LoopEnv, job_id: str) -> str:
    async with env.sessionmaker() as session:
        return str(await session.scalar(select(orm.Job.status).where(orm.Job.id == job_id)))


async def test_idle_batches_are_closed_by_their_runs_outcome(loop_env: LoopEnv) -> None:
    ok = await plant(loop_env, ["completed", "completed"])
    broken = await plant(loop_env, ["completed", "failed"])
    busy = await plant(loop_env, ["completed", "created"])
    cancelled = await plant(loop_env, ["cancelled", "cancelled"], job_status="cancelled")

    closed = await finish_idle_batches(loop_env.sessionmaker, policy=POLICY)

    assert sorted(closed) == sorted([ok, broken])
    assert await status_of(loop_env, ok) == "completed"
    assert await status_of(loop_env, broken) == "failed"
    assert await status_of(loop_env, busy) == "running"
    assert await status_of(loop_env, cancelled) == "cancelled"


async def test_a_batch_is_closed_once(loop_env: LoopEnv) -> None:
    job_id = await plant(loop_env, ["completed"])
    results = await asyncio.gather(*(finish_batch(loop_env.sessionmaker, job_id, policy=POLICY) for _ in range(3)))
    assert sorted(results) == [False, False, True]
    assert await finish_idle_batches(loop_env.sessionmaker, policy=POLICY) == []
