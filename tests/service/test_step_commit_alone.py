"""The common step's commit is one statement that commits by itself and takes the agent's xact lock itself
(`loop/commit.py`, `runs/step_write.py`): a holder of the lock that rewrites the window finishes before the append
reads it, and an agent deleted during the turn still ends the turn with NotFoundError."""

import asyncio
from typing import Any

import pytest
from sqlalchemy import delete

from memlet import ids
from memlet.db import models as orm
from memlet.db.driver import lone_statements
from memlet.db.locks import agent_xact_lock, lock_key
from memlet.errors import NotFoundError
from memlet.loop import commit
from memlet.loop.events import RunFailed
from memlet.runs.step_write import write_step
from tests.mock_llm import Reply
from tests.service.loop_factories import LoopEnv, loop_env  # noqa: F401  (the fixture)


async def test_the_append_waits_for_a_lock_holder_and_extends_what_it_wrote(loop_env: LoopEnv) -> None:  # noqa: F811
    agent = await loop_env.agent()
    run_id = ids.new_id(ids.Prefix.RUN)
    async with loop_env.sessionmaker() as session, session.begin():
        session.add(orm.Run(id=run_id, agent_id=agent.id, status="running", organization_id=agent.organization_id))
    row = orm.Message(
        id=ids.new_id(ids.Prefix.MESSAGE),
        organization_id=agent.organization_id,
        agent_id=agent.id,
        role="user",
        content=[{"type": "text", "text": "hi"}],
        run_id=run_id,
    )

    async def append() -> list[str]:
        async with lone_statements(loop_env.sessionmaker) as driver:
            written = await write_step(
                driver,
                agent_id=agent.id,
                conversation_id=None,
                run_id=run_id,
                step=None,
                rows=[row],
                num_steps=1,
                tools_used=[],
                last_stop_reason=None,
                end=None,
                lock_key=lock_key(agent.id),
            )
        return written.message_ids

    async with loop_env.sessionmaker() as holder, holder.begin():  # a compaction's or a reset's read-modify-write
        await agent_xact_lock(holder, agent.id)
        held = await holder.get(orm.Agent, agent.id)
        assert held is not None
        window = list(held.message_ids)
        appending = asyncio.create_task(append())
        await asyncio.sleep(0.3)
        assert not appending.done()  # the statement waits for the lock before it reads the agent's row
        held.message_ids = [*window, "message-written-under-the-lock"]
    assert await appending == [*window, "message-written-under-the-lock", row.id]


async def test_an_agent_deleted_during_the_turn_ends_it_with_not_found(
    loop_env: LoopEnv,  # noqa: F811
    mock_llm: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    agent = await loop_env.agent()
    real_write = commit.write_step

    async def deleted_first(driver: Any, **kwargs: Any) -> Any:
        async with loop_env.sessionmaker() as session, session.begin():
            await session.execute(delete(orm.Agent).where(orm.Agent.id == agent.id))
        return await real_write(driver, **kwargs)

    monkeypatch.setattr(commit, "write_step", deleted_first)
    mock_llm.script(Reply.text("hello"))
    out = await loop_env.send(agent, "hi")
    assert isinstance(out.final, RunFailed)
    assert isinstance(out.final.error, NotFoundError)
    assert await loop_env.get(orm.Agent, agent.id) is None
