"""Firing and claiming sleeptime runs against Postgres: one queued run per sleeptime agent (later firings join it),
one run in flight per sleeptime agent, and each queued run claimed once."""

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.db import models as orm
from memlet.runs.queue_repository import QueuedRunRepository
from memlet.sleeptime.firing import RUN_TYPE, fire_after_turn
from tests.service.loop_factories import make_agent


async def sleeptime_pair(session: AsyncSession, frequency: int | None) -> tuple[orm.Agent, orm.Agent, Actor]:
    main = await make_agent(session)
    main.enable_sleeptime = True
    helper = await make_agent(session, agent_type="sleeptime_agent")
    helper.organization_id = main.organization_id
    group = orm.Group(
        id=ids.new_id(ids.Prefix.GROUP),
        organization_id=main.organization_id,
        manager_type="sleeptime",
        description="",
        manager_agent_id=main.id,
        sleeptime_agent_frequency=frequency,
        turns_counter=-1,
    )
    session.add(group)
    await session.flush()
    session.add(orm.GroupAgent(group_id=group.id, agent_id=helper.id, position=0))
    await session.flush()
    return main, helper, Actor(ids.DEFAULT_USER_ID, main.organization_id)


async def test_firings_queue_coalesce_and_claim_one_at_a_time(session: AsyncSession) -> None:
    main, helper, actor = await sleeptime_pair(session, frequency=1)
    queue = QueuedRunRepository(session)
    (first,) = await fire_after_turn(session, actor, main.id, "message-a")
    run = await session.get(orm.Run, first)
    assert run is not None and run.status == "created" and run.worker_id is None
    assert run.metadata_ == {"run_type": RUN_TYPE, "agent_id": helper.id}

    claimed = await queue.claim("worker-a", 30)
    assert claimed is not None and claimed.run_id == first
    await session.refresh(run)
    assert run.worker_id == "worker-a" and run.lease_expires_at is not None
    assert await queue.claim("worker-b", 30) is None  # nothing left: each queued run is claimed once

    (second,) = await fire_after_turn(session, actor, main.id, "message-b")
    (joined,) = await fire_after_turn(session, actor, main.id, "message-c")
    assert joined == second != first
    waiting = await session.scalar(select(orm.QueuedRun).where(orm.QueuedRun.run_id == second))
    assert waiting is not None and waiting.payload["after"] == "message-a" and waiting.payload["through"] == "message-c"
    assert await queue.claim("worker-b", 30) is None  # the first run is still in flight

    run.status = "completed"
    await session.flush()
    again = await queue.claim("worker-b", 30)
    assert again is not None and again.run_id == second


async def test_a_turn_without_messages_counts_but_fires_nothing(session: AsyncSession) -> None:
    main, _, actor = await sleeptime_pair(session, frequency=2)
    assert await fire_after_turn(session, actor, main.id, None) == []  # turn 1 would fire, but wrote nothing
    assert await fire_after_turn(session, actor, main.id, "message-a") == []  # turn 2
    assert len(await fire_after_turn(session, actor, main.id, "message-b")) == 1  # turn 3


async def test_sleeptime_off_fires_nothing(session: AsyncSession) -> None:
    main, _, actor = await sleeptime_pair(session, frequency=None)
    main.enable_sleeptime = None
    await session.flush()
    assert await fire_after_turn(session, actor, main.id, "message-a") == []
