"""When a main agent's turn ends: count it, and queue work for its sleeptime agents (durably, coalesced).

The group counts turns: ``turns_counter = (turns_counter + 1) % sleeptime_agent_frequency`` and the sleeptime
agents run when it comes back to 0 (from -1, that is turns 1, 6, 11 ... at frequency 5). A null frequency runs them
after every turn, 0 never. A turn that produced no message is counted but runs nothing.

Each firing is a sleeptime run, queued in ``queued_runs`` in the same transaction as the count, so it survives a
restart. A sleeptime agent has at most one queued run: a firing while one waits joins it (its transcript grows to
the newest message) instead of queueing a second. The transcript is read when the run starts: the main agent's
messages after the group's last processed message up to the newest one the firing saw.
"""

from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.agents.repository import AgentRepository
from memlet.db import models as orm
from memlet.groups.repository import GroupRepository
from memlet.messages.repository import MessageRepository
from memlet.runs.queue_repository import QueuedRunRepository
from memlet.sleeptime.transcript import sleeptime_input

RUN_TYPE = "sleeptime_agent_send_message_async"
QUEUE_KIND = "sleeptime"


def next_counter(counter: int | None, frequency: int | None) -> tuple[int | None, bool]:
    """The group's new turns counter and whether this turn fires (None counter: leave it as it is)."""
    if frequency is None:
        return counter, True
    if frequency <= 0:
        return counter, False
    bumped = ((-1 if counter is None else counter) + 1) % frequency
    return bumped, bumped == 0


async def active_group_id(session: AsyncSession, org_id: str, agent_id: str) -> str | None:
    """The id of the sleeptime group `agent_id` manages, when it has ``enable_sleeptime`` on; else None."""
    return await GroupRepository(session).active_sleeptime_group_id(org_id, agent_id)


async def fire_after_turn(session: AsyncSession, actor: Actor, agent_id: str, last_message_id: str | None) -> list[str]:
    """Count a finished turn of `agent_id` and queue its sleeptime runs when it fires; returns their run ids.

    `last_message_id` is the newest message the turn wrote (None: it wrote none). Does nothing for an agent
    without a sleeptime group or with ``enable_sleeptime`` off.
    """
    groups = GroupRepository(session)
    managed = await groups.managed_by(agent_id, "sleeptime")
    if not managed:
        return []
    agent = await AgentRepository(session).find(actor.organization_id, agent_id)
    if agent is None or not agent.enable_sleeptime:
        return []
    run_ids: list[str] = []
    for found in managed:
        group = await groups.find(actor.organization_id, found.id, for_update=True)  # serializes firings
        if group is None:
            continue
        counter, fires = next_counter(group.turns_counter, group.sleeptime_agent_frequency)
        if counter != group.turns_counter:
            await groups.update(group.id, turns_counter=counter)
        if not fires or last_message_id is None:
            continue
        after = group.last_processed_message_id
        await groups.update(group.id, last_processed_message_id=last_message_id)
        for sleeptime_agent_id in await groups.agent_ids(group.id):
            run_ids.append(await _queue(session, actor, sleeptime_agent_id, group.id, after, last_message_id))
    return run_ids


async def _queue(
    session: AsyncSession, actor: Actor, agent_id: str, group_id: str, after: str | None, through: str
) -> str:
    queue = QueuedRunRepository(session)
    waiting = await queue.for_agent(agent_id)
    if waiting is not None:  # coalesce: the waiting run will review up to the newest message
        await queue.set_payload(waiting.run_id, {**waiting.payload, "through": through})
        return waiting.run_id
    run = orm.Run(
        id=ids.new_id(ids.Prefix.RUN),
        agent_id=agent_id,
        organization_id=actor.organization_id,
        status="created",
        metadata_={"run_type": RUN_TYPE, "agent_id": agent_id},
        background=False,
        num_steps=0,
        created_by_id=actor.user_id,
    )
    await queue.add(run, kind=QUEUE_KIND, payload={"group_id": group_id, "after": after, "through": through})
    return run.id


@dataclass(frozen=True)
class SleeptimeWork:
    """A claimed sleeptime run, ready to start: its run row and the one user message it gets."""

    run: orm.Run
    actor: Actor
    text: str
    group_id: str


async def prepare(session: AsyncSession, claimed: orm.QueuedRun) -> SleeptimeWork | None:
    """The claimed run's input, read from the main agent's messages; None when its group or run is gone."""
    payload: dict[str, Any] = claimed.payload or {}
    run = await session.get(orm.Run, claimed.run_id)
    group = await GroupRepository(session).find(claimed.organization_id, str(payload.get("group_id")))
    if run is None or group is None or group.manager_agent_id is None:
        return None
    main_type = await AgentRepository(session).agent_type(claimed.organization_id, group.manager_agent_id)
    if main_type is None:
        return None
    messages = await MessageRepository(session).between(
        group.manager_agent_id, after=payload.get("after"), through=payload.get("through")
    )
    actor = Actor(claimed.created_by_id or ids.DEFAULT_USER_ID, claimed.organization_id)
    return SleeptimeWork(run, actor, sleeptime_input(main_type, messages), group.id)
