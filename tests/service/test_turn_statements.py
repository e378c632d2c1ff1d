"""The writes every turn runs (start the run, record a step, append to message_ids, close the run, the agent's
last stop reason, the step's messages) are Core statements on the tables: no ORM bulk-persistence layer and no
identity-map synchronisation per call, and they still do what they did."""

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import bindparam, event, literal, select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import ORMExecuteState

from memlet import ids
from memlet.agents.repository import AgentRepository
from memlet.config import Settings
from memlet.db import models as orm
from memlet.db.driver import driver_of
from memlet.db.engine import async_url, autocommit_session, create_turn_engine, single_read
from memlet.groups.repository import GroupRepository
from memlet.messages.repository import MessageRepository
from memlet.runs.repository import RunRepository
from memlet.runs.run_statements import RunStart
from tests.service.loop_factories import make_agent


@contextmanager
def orm_statements(session: AsyncSession) -> Iterator[list[str]]:
    """The statements run through `session` that the ORM layer handled (ORM-enabled selects and DML)."""
    seen: list[str] = []

    def record(state: ORMExecuteState) -> None:
        if state.is_orm_statement:
            seen.append(str(state.statement))

    event.listen(session.sync_session, "do_orm_execute", record)
    try:
        yield seen
    finally:
        event.remove(session.sync_session, "do_orm_execute", record)


async def test_turn_writes_skip_the_orm_layer_and_still_apply(session: AsyncSession) -> None:
    agent = await make_agent(session)
    run_id = ids.new_id(ids.Prefix.RUN)
    message = orm.Message(
        id=ids.new_id(ids.Prefix.MESSAGE),
        organization_id=agent.organization_id,
        agent_id=agent.id,
        role="user",
        content=[{"type": "text", "text": "hi"}],
    )
    runs, agents = RunRepository(session), AgentRepository(session)
    with orm_statements(session) as seen:
        start = RunStart(
            run_id=run_id, agent_id=agent.id, organization_id=agent.organization_id, metadata={"run_type": "t"}
        )
        _, status = await runs.read_and_start(select(literal(1)), {}, start)
        await MessageRepository(session).add([message])
        window = await agents.append_message_ids(agent.id, [message.id])
        progress = await runs.record_progress(run_id, num_steps=1, tools_used=["send_message"])
        await runs.finish(
            run_id,
            status="failed",
            stop_reason="error",
            num_steps=1,
            tools_used=["send_message"],
            error={"type": "X", "message": "boom"},
        )
        await agents.set_last_stop_reason(agent.id, "error")
    assert seen == []
    assert (status, progress) == ("running", "running")
    assert window[-1] == message.id
    run = await session.get(orm.Run, run_id, populate_existing=True)
    assert run is not None and (run.status, run.stop_reason, run.num_steps) == ("failed", "error", 1)
    assert run.metadata_ == {"run_type": "t", "error": {"type": "X", "message": "boom"}}
    stored = await session.get(orm.Agent, agent.id, populate_existing=True)
    assert stored is not None and stored.last_stop_reason == "error" and stored.message_ids[-1] == message.id


class TestSingleRead:
    async def test_reads_without_a_transaction(self, pg_uri: str) -> None:
        """Each statement is its own transaction (`now()` moves between them); the pooled connection is
        transactional again afterwards (`now()` holds still within one transaction)."""
        engine = create_async_engine(async_url(pg_uri))
        now = text("SELECT now()")
        try:
            async with single_read(async_sessionmaker(engine)) as session:
                first = await session.scalar(now)
                await session.execute(text("SELECT pg_sleep(0.01)"))
                assert await session.scalar(now) != first
            async with async_sessionmaker(engine)() as session:
                first = await session.scalar(now)
                await session.execute(text("SELECT pg_sleep(0.01)"))
                assert await session.scalar(now) == first
        finally:
            await engine.dispose()

    async def test_on_a_kept_connection_then_transactional_again(self, pg_uri: str) -> None:
        """`autocommit_session` on a connection its caller keeps (a turn's locked one): each statement is its own
        transaction, and the connection is transactional again afterwards, with no transaction left open."""
        engine = create_async_engine(async_url(pg_uri))
        now = text("SELECT now()")
        try:
            async with engine.connect() as conn:
                maker = async_sessionmaker(bind=conn)
                async with autocommit_session(maker) as session:
                    first = await session.scalar(now)
                    await session.execute(text("SELECT pg_sleep(0.01)"))
                    assert await session.scalar(now) != first
                assert not conn.in_transaction()
                async with maker() as session:
                    first = await session.scalar(now)
                    await session.execute(text("SELECT pg_sleep(0.01)"))
                    assert await session.scalar(now) == first
        finally:
            await engine.dispose()

    async def test_refuses_a_connection_bound_sessionmaker(self, session: AsyncSession) -> None:
        with pytest.raises(TypeError):
            async with single_read(async_sessionmaker(bind=await session.connection())):
                pass


_INSERT_FOR_AGENT = RunRepository.insert_for_agent(
    GroupRepository.agent_type_and_sleeptime_group_query(bindparam("p_org"), bindparam("p_agent"))
)


class TestRunInsertThatChecksItsAgent:
    """`RunRepository.add_for_agent`: the agent check and the run's INSERT of a send in one statement."""

    @staticmethod
    def _run(agent: orm.Agent, **fields: object) -> orm.Run:
        return orm.Run(
            id=ids.new_id(ids.Prefix.RUN),
            agent_id=agent.id,
            organization_id=agent.organization_id,
            status="created",
            metadata_={"run_type": "send_message"},
            request_config=None,
            background=False,
            num_steps=0,
            otids=None,
            **fields,
        )

    async def test_writes_the_row_the_orm_writes(self, session: AsyncSession) -> None:
        agent = await make_agent(session)
        runs = RunRepository(session)
        by_orm, checked = self._run(agent), self._run(agent)
        await runs.add(by_orm)
        params = {"p_org": agent.organization_id, "p_agent": agent.id}
        assert await runs.add_for_agent(await driver_of(session), checked, _INSERT_FOR_AGENT, params) == (
            "letta_v1_agent",
            None,
        )
        columns = [c.name for c in orm.Run.__table__.columns if c.name not in ("id", "created_at", "updated_at")]
        listed = ", ".join(columns)
        rows = (
            await session.execute(
                text(f"SELECT {listed} FROM runs WHERE id IN (:a, :b) ORDER BY id = :a DESC"),
                {"a": by_orm.id, "b": checked.id},
            )
        ).all()
        assert len(rows) == 2 and rows[0] == rows[1]
        stored = await session.get(orm.Run, checked.id, populate_existing=True)
        assert stored is not None and stored.created_at == checked.created_at

    async def test_writes_nothing_for_an_unknown_or_foreign_agent(self, session: AsyncSession) -> None:
        agent = await make_agent(session)
        runs = RunRepository(session)
        for org_id, agent_id in (("org-other", agent.id), (agent.organization_id, "agent-unknown")):
            run = self._run(agent)
            params = {"p_org": org_id, "p_agent": agent_id}
            assert await runs.add_for_agent(await driver_of(session), run, _INSERT_FOR_AGENT, params) is None
            assert await runs.status_of(run.id) is None


def test_the_turn_pool_keeps_20_connections_between_bursts(pg_uri: str) -> None:
    """20 turns at once reuse their connections (and the statements prepared on them) in the next burst."""
    settings = Settings(_env_file=None, pg_uri=pg_uri)  # type: ignore[call-arg]
    engine = create_turn_engine(pg_uri, settings.model_copy(update={"max_concurrent_turns": 50}))
    small = create_turn_engine(pg_uri, settings.model_copy(update={"max_concurrent_turns": 3}))
    try:
        assert engine.pool.size() == 20  # type: ignore[attr-defined]
        assert small.pool.size() == 4  # type: ignore[attr-defined]
    finally:
        engine.sync_engine.dispose()
        small.sync_engine.dispose()
