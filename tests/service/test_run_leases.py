"""Which runs a worker may close when several share one database: only those no live worker vouches for."""

import asyncio
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from memlet import ids, migrations
from memlet.config import Settings
from memlet.db import models as orm
from memlet.db.embedded import EmbeddedPostgres
from memlet.db.engine import create_engine, create_sessionmaker
from memlet.net.outbound import OutboundPolicy
from memlet.turns.lifecycle import hold_liveness, renew_leases, sweep
from tests.mock_llm import Reply
from tests.service.loop_factories import CustomTool, LoopEnv, function_schema, loop_env

__all__ = ["loop_env"]

ME = "worker-me"
LEASE_S = 30.0
POLICY = OutboundPolicy()  # no callbacks here: nothing needs allowing


@pytest.fixture(scope="module")
def settings(settings: Settings, embedded_pg: EmbeddedPostgres, pg_uri: str) -> Iterator[Settings]:
    """These tests own a database of their own: the session's live server sweeps orphaned runs of the shared one
    every few seconds, and would race them for the very runs they plant."""
    name = "memlet_run_leases"
    embedded_pg.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE); CREATE DATABASE "{name}";')
    uri = make_url(pg_uri).set(database=name).render_as_string(hide_password=False)
    asyncio.run(migrations.upgrade(uri))
    yield settings.model_copy(update={"pg_uri": uri})
    embedded_pg.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE);')


@pytest.fixture
async def db(settings: Settings) -> AsyncIterator[tuple[AsyncEngine, async_sessionmaker[AsyncSession]]]:
    engine = create_engine(settings.pg_uri or "", settings)
    yield engine, create_sessionmaker(engine)
    await engine.dispose()


async def add_run(env: LoopEnv, agent: orm.Agent, **fields: Any) -> str:
    run_id = ids.new_id(ids.Prefix.RUN)
    async with env.sessionmaker() as session, session.begin():
        values = {"status": "running", "num_steps": 0, **fields}
        session.add(orm.Run(id=run_id, agent_id=agent.id, organization_id=agent.organization_id, **values))
    return run_id


def soon(seconds: float) -> datetime:
    return datetime.now(UTC) + timedelta(seconds=seconds)


async def statuses(env: LoopEnv, run_ids: list[str]) -> list[str]:
    async with env.sessionmaker() as session:
        rows = {r.id: r.status for r in await session.scalars(select(orm.Run).where(orm.Run.id.in_(run_ids)))}
    return [rows[r] for r in run_ids]


async def test_sweep_closes_only_runs_no_live_worker_owns(loop_env: LoopEnv, db: Any) -> None:
    engine, maker = db
    agent = await loop_env.agent()
    alive = await hold_liveness(engine, "worker-alive")
    try:
        kept = [
            await add_run(loop_env, agent, worker_id="worker-alive", lease_expires_at=soon(LEASE_S)),
            await add_run(loop_env, agent, worker_id=None, created_at=datetime.now(UTC)),  # too young to judge
            await add_run(loop_env, agent, worker_id=ME, lease_expires_at=soon(-5)),  # mine, still in flight
            await add_run(loop_env, agent, status="completed", worker_id="worker-gone", lease_expires_at=soon(-5)),
        ]
        closed = [
            await add_run(loop_env, agent, worker_id="worker-alive", lease_expires_at=soon(-1)),  # lease ran out
            await add_run(loop_env, agent, worker_id="worker-gone", lease_expires_at=soon(LEASE_S)),  # process died
            await add_run(loop_env, agent, worker_id=None, created_at=soon(-2 * LEASE_S), status="created"),
        ]
        done = await sweep(maker, ME, LEASE_S, keep=[kept[2]], policy=POLICY)
    finally:
        await alive.invalidate()
    assert sorted(done) == sorted(closed)
    assert await statuses(loop_env, closed) == ["failed"] * 3
    assert await statuses(loop_env, kept) == ["running", "running", "running", "completed"]


async def test_renewing_keeps_a_run_from_the_sweep(loop_env: LoopEnv, db: Any) -> None:
    engine, maker = db
    agent = await loop_env.agent()
    alive = await hold_liveness(engine, "worker-alive")
    try:
        run_id = await add_run(loop_env, agent, worker_id="worker-alive", lease_expires_at=soon(-1))
        await renew_leases(maker, "worker-alive", [run_id], LEASE_S)
        assert await sweep(maker, ME, LEASE_S, policy=POLICY) == []
    finally:
        await alive.invalidate()
    assert await statuses(loop_env, [run_id]) == ["running"]


GATED = CustomTool(
    name="launch",
    source_code='def launch() -> str:\n    """Launch."""\n    return "launched"\n',
    json_schema=function_schema("launch", {}),
    default_requires_approval=True,
)


async def test_an_interrupted_runs_pending_approval_is_denied(loop_env: LoopEnv, db: Any, mock_llm: Any) -> None:
    """A crash between writing an approval request and closing its run: the request is denied on close."""
    _, maker = db
    agent = await loop_env.agent(custom_tools=[GATED])
    mock_llm.script(Reply.tool_call("launch", {}, id="call_launch"))
    asked = await loop_env.send(agent, "launch it")
    assert asked.final.stop_reason == "requires_approval"
    async with loop_env.sessionmaker() as session, session.begin():
        run = await session.get(orm.Run, asked.run_id)
        assert run is not None
        run.status, run.stop_reason, run.worker_id = "running", None, "worker-gone"  # as the crash left it
    assert await sweep(maker, ME, LEASE_S, policy=POLICY) == [asked.run_id]
    rows = await loop_env.in_context(agent.id)
    assert [r.role for r in rows[-2:]] == ["approval", "tool"]
    assert rows[-1].tool_call_id == "call_launch"
    mock_llm.script(Reply.text("ok"))
    assert (await loop_env.send(agent, "hello again")).final.stop_reason == "end_turn"


async def test_another_runs_pending_approval_is_left_alone(loop_env: LoopEnv, db: Any, mock_llm: Any) -> None:
    _, maker = db
    agent = await loop_env.agent(custom_tools=[GATED])
    mock_llm.script(Reply.tool_call("launch", {}, id="call_launch"))
    asked = await loop_env.send(agent, "launch it")
    orphan = await add_run(loop_env, agent, worker_id="worker-gone", lease_expires_at=soon(-1))
    assert await sweep(maker, ME, LEASE_S, policy=POLICY) == [orphan]
    rows = await loop_env.in_context(agent.id)
    assert rows[-1].role == "approval" and rows[-1].run_id == asked.run_id  # still waiting for the client
