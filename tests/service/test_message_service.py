"""MessageService and AgentMessageService against real Postgres: listing order and cursors, 404s, reset,
recompile (in place, dry run) and cancel."""

import asyncio
from typing import Any

import pytest
from sqlalchemy import delete, event, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine

from memlet import ids
from memlet.actor import Actor
from memlet.agents.schemas import AgentState, CreateAgent
from memlet.agents.service import AgentService
from memlet.agents.system_message import rebuild_prompts
from memlet.blocks.service import BlockService
from memlet.config import Settings
from memlet.db import models as orm
from memlet.db.engine import async_url
from memlet.db.locks import agent_xact_lock
from memlet.db.pagination import Page
from memlet.errors import ConflictError, NotFoundError
from memlet.loop.cancel import cancel_runs
from memlet.messages.repository import MessageRepository
from memlet.messages.service import HistoryQuery, MessageService
from memlet.providers.catalog import ModelCatalog
from memlet.turns.agent_messages import AgentMessageService

LLM = {"model": "gpt-4o-mini", "model_endpoint_type": "openai", "context_window": 128000}


@pytest.fixture
async def actor(session: AsyncSession) -> Actor:
    org_id = ids.new_id(ids.Prefix.ORGANIZATION)
    session.add(orm.Organization(id=org_id, name="messages-test"))
    await session.flush()
    return Actor(ids.DEFAULT_USER_ID, org_id)


async def make_agent(session: AsyncSession, actor: Actor, **fields: Any) -> AgentState:
    catalog = ModelCatalog(Settings(_env_file=None))  # type: ignore[call-arg]
    body = {"llm_config": LLM, "include_base_tools": False, "name": "m", **fields}
    return await AgentService(session, catalog).create(actor, CreateAgent.model_validate(body))


async def say(session: AsyncSession, agent: AgentState, *texts: str, in_context: bool = True) -> list[str]:
    """Store one user message per text (oldest first), appended to the context window unless told otherwise."""
    rows = [
        orm.Message(
            id=ids.new_id(ids.Prefix.MESSAGE),
            organization_id=(await session.get(orm.Agent, agent.id)).organization_id,  # type: ignore[union-attr]
            agent_id=agent.id,
            role="user",
            content=[{"type": "text", "text": text}],
        )
        for text in texts
    ]
    await MessageRepository(session).add(rows)
    if in_context:
        row = await session.get(orm.Agent, agent.id)
        assert row is not None
        row.message_ids = [*row.message_ids, *(r.id for r in rows)]
        await session.flush()
    return [r.id for r in rows]


def texts(views: list[Any]) -> list[str]:
    return [v.content for v in views if v.message_type == "user_message"]


async def system_text(session: AsyncSession, message_id: str) -> str:
    content = await session.scalar(select(orm.Message.content).where(orm.Message.id == message_id))
    return "".join(part.get("text", "") for part in content or [])


class TestAgentHistory:
    async def test_default_is_newest_tail_oldest_first_with_cursors(self, session: AsyncSession, actor: Actor) -> None:
        agent = await make_agent(session, actor)
        one, _, three = await say(session, agent, "one", "two", "three")
        service = AgentMessageService(session, actor)
        assert texts(await service.list_for_agent(agent.id, HistoryQuery(limit=2))) == ["two", "three"]
        assert texts(await service.list_for_agent(agent.id, HistoryQuery(before=three, limit=1))) == ["two"]
        assert texts(await service.list_for_agent(agent.id, HistoryQuery(after=one))) == ["two", "three"]

    async def test_explicit_order_pages(self, session: AsyncSession, actor: Actor) -> None:
        agent = await make_agent(session, actor)
        _, two, _ = await say(session, agent, "one", "two", "three")
        service = AgentMessageService(session, actor)
        newest = await service.list_for_agent(agent.id, HistoryQuery(order="desc", limit=2))
        assert texts(newest) == ["three", "two"]
        older = await service.list_for_agent(agent.id, HistoryQuery(order="desc", after=two))
        assert texts(older) == ["one"]
        oldest = await service.list_for_agent(agent.id, HistoryQuery(order="asc", limit=None))
        assert texts(oldest) == ["one", "two", "three"]

    @pytest.mark.parametrize(("order", "side"), [("desc", "after"), ("desc", "before"), ("asc", "after")])
    async def test_cursor_page_walks_the_agent_sequence_index_with_no_sort(
        self, session: AsyncSession, actor: Actor, order: str, side: str
    ) -> None:
        """At 100k messages a page must stay an index range scan, wherever the cursor is (bench/bench_scale.py)."""
        agent, other = await make_agent(session, actor), await make_agent(session, actor)
        ids_ = []
        for i in range(20):  # the agent's history interleaved with a busier agent's, as on a shared server
            ids_ += await say(session, agent, f"m{i}", in_context=False)
            await say(session, other, *(f"o{i}.{j}" for j in range(50)), in_context=False)
        await session.execute(text("ANALYZE messages"))
        seen: list[tuple[str, Any]] = []
        engine = session.bind.engine  # type: ignore[union-attr]

        def record(_conn: object, _cursor: object, statement: str, parameters: Any, *_: object) -> None:
            seen.append((statement, parameters))

        event.listen(engine.sync_engine, "before_cursor_execute", record)
        try:
            page = Page(limit=5, order=order, **{side: ids_[10]})  # type: ignore[arg-type]
            rows = await MessageRepository(session).page_for_agent(agent.id, page)
        finally:
            event.remove(engine.sync_engine, "before_cursor_execute", record)
        assert len(rows) == 5
        statement, parameters = seen[-1]
        await session.execute(text("SET LOCAL enable_seqscan = off"))
        result = await (await session.connection()).exec_driver_sql(f"EXPLAIN {statement}", parameters)
        plan = "\n".join(r[0] for r in result)
        assert "ix_messages_agent_seq" in plan and "Sort" not in plan, plan

    async def test_unknown_agent_or_foreign_cursor_404(self, session: AsyncSession, actor: Actor) -> None:
        service = AgentMessageService(session, actor)
        missing = ids.new_id(ids.Prefix.AGENT)
        with pytest.raises(NotFoundError, match=f"Agent with ID {missing} not found"):
            await service.list_for_agent(missing, HistoryQuery())
        mine, other = await make_agent(session, actor), await make_agent(session, actor)
        (theirs,) = await say(session, other, "hidden")
        with pytest.raises(NotFoundError, match=f"No message found with id '{theirs}' for agent '{mine.id}'"):
            await service.list_for_agent(mine.id, HistoryQuery(after=theirs))
        with pytest.raises(NotFoundError):
            await AgentMessageService(session, Actor(ids.DEFAULT_USER_ID, ids.DEFAULT_ORG_ID)).list_for_agent(
                mine.id, HistoryQuery()
            )


class TestMessageCount:
    """The recall count comes from agents.message_count, kept by triggers: never a scan of the history."""

    async def test_counter_follows_inserts_and_deletes(self, session: AsyncSession, actor: Actor) -> None:
        agent, other = await make_agent(session, actor), await make_agent(session, actor)
        repo = MessageRepository(session)

        async def scanned(agent_id: str) -> int:
            return int(await session.scalar(select(func.count()).where(orm.Message.agent_id == agent_id)) or 0)

        first = await say(session, agent, "one", "two", "three", in_context=False)
        await say(session, other, "elsewhere")
        await repo.delete_for_agent(agent.id, first[:2])
        for agent_id in (agent.id, other.id):
            assert await repo.count_for_agent(agent_id) == await scanned(agent_id) > 0

    async def test_prompt_rebuild_reads_the_counter_not_the_history(self, session: AsyncSession, actor: Actor) -> None:
        agent = await make_agent(session, actor)
        await say(session, agent, *(f"m{i}" for i in range(5)), in_context=False)
        seen: list[str] = []
        engine = session.bind.engine  # type: ignore[union-attr]

        def record(_conn: object, _cursor: object, statement: str, *_: object) -> None:
            seen.append(statement)

        row = await session.get(orm.Agent, agent.id)
        assert row is not None
        event.listen(engine.sync_engine, "before_cursor_execute", record)
        try:
            await rebuild_prompts(session, [row])
        finally:
            event.remove(engine.sync_engine, "before_cursor_execute", record)
        assert not [s for s in seen if "count(" in s and "FROM messages" in s], seen
        assert "5 previous messages between you and the user are stored in recall memory" in await system_text(
            session, row.message_ids[0]
        )


class TestReset:
    async def test_keeps_only_system_message_and_recall(self, session: AsyncSession, actor: Actor) -> None:
        agent = await make_agent(session, actor)
        assert agent.message_ids
        system_id = agent.message_ids[0]
        await say(session, agent, "hello", "again")
        service = AgentMessageService(session, actor)
        await service.reset(agent.id, add_default_initial_messages=False)
        row = await session.get(orm.Agent, agent.id)
        assert row is not None and row.message_ids == [system_id]
        # Stored messages stay searchable and the prompt now counts them as recall memory.
        assert texts(await service.list_for_agent(agent.id, HistoryQuery())) == ["hello", "again"]
        assert "2 previous messages" in await system_text(session, system_id)

    async def test_default_initial_messages_follow_agent_type(self, session: AsyncSession, actor: Actor) -> None:
        service = AgentMessageService(session, actor)
        v1 = await make_agent(session, actor)
        await service.reset(v1.id, add_default_initial_messages=True)
        assert len((await session.get(orm.Agent, v1.id)).message_ids) == 1  # type: ignore[union-attr]
        memgpt = await make_agent(session, actor, agent_type="memgpt_v2_agent")
        await say(session, memgpt, "hi")
        await service.reset(memgpt.id, add_default_initial_messages=True)
        row = await session.get(orm.Agent, memgpt.id)
        assert row is not None and len(row.message_ids) > 1 and row.message_ids[0] == memgpt.message_ids[0]  # type: ignore[index]


class TestRecompile:
    async def test_rewrites_system_message_in_place(self, session: AsyncSession, actor: Actor) -> None:
        agent = await make_agent(session, actor, memory_blocks=[{"label": "human", "value": "old fact"}])
        assert agent.message_ids
        human = agent.blocks[0]
        block = await session.get(orm.Block, human.id)
        assert block is not None
        block.value = "new fact"  # changed behind the service's back: only a recompile shows it
        await session.flush()
        text = await AgentMessageService(session, actor).recompile(agent.id, update_timestamp=False, dry_run=False)
        assert "new fact" in text
        row = await session.get(orm.Agent, agent.id)
        assert row is not None and row.message_ids == agent.message_ids
        stored = await system_text(session, agent.message_ids[0])
        assert "new fact" in stored and "old fact" not in stored

    async def test_dry_run_changes_nothing(self, session: AsyncSession, actor: Actor) -> None:
        agent = await make_agent(session, actor, memory_blocks=[{"label": "human", "value": "old fact"}])
        assert agent.message_ids
        before = await system_text(session, agent.message_ids[0])
        block = await session.get(orm.Block, agent.blocks[0].id)
        assert block is not None
        block.value = "new fact"
        await session.flush()
        text = await AgentMessageService(session, actor).recompile(agent.id, update_timestamp=True, dry_run=True)
        assert "new fact" in text
        session.expire_all()
        assert await system_text(session, agent.message_ids[0]) == before
        assert (
            await BlockService(session, rebuild_prompts).get(actor, agent.blocks[0].id)
        ).value == "new fact"  # outer work kept

    async def test_unknown_agent_404(self, session: AsyncSession, actor: Actor) -> None:
        with pytest.raises(NotFoundError):
            await AgentMessageService(session, actor).recompile(
                ids.new_id(ids.Prefix.AGENT), update_timestamp=False, dry_run=False
            )


class TestCancel:
    async def test_nothing_active_is_409(self, session: AsyncSession, actor: Actor) -> None:
        agent = await make_agent(session, actor)
        session.add(
            orm.Run(
                id=ids.new_id(ids.Prefix.RUN),
                organization_id=actor.organization_id,
                agent_id=agent.id,
                status="completed",
            )
        )
        await session.flush()
        with pytest.raises(ConflictError, match=f"No active runs to cancel for agent {agent.id}"):
            await AgentMessageService(session, actor).cancel(agent.id, None)

    async def test_cancels_active_runs_only(self, session: AsyncSession, actor: Actor) -> None:
        agent = await make_agent(session, actor)
        running = orm.Run(
            id=ids.new_id(ids.Prefix.RUN), organization_id=actor.organization_id, agent_id=agent.id, status="running"
        )
        done = orm.Run(
            id=ids.new_id(ids.Prefix.RUN),
            organization_id=actor.organization_id,
            agent_id=agent.id,
            status="completed",
            stop_reason="end_turn",
        )
        session.add_all([running, done])
        await session.flush()
        assert await AgentMessageService(session, actor).cancel(agent.id, None) == {running.id: "cancelled"}
        assert (running.status, running.stop_reason) == ("cancelled", "cancelled")
        assert done.status == "completed"
        unknown = ids.new_id(ids.Prefix.RUN)
        assert await AgentMessageService(session, actor).cancel(agent.id, [unknown]) == {unknown: "failed"}


class TestOrgMessages:
    async def test_lists_every_agent_of_the_org_only(self, session: AsyncSession, actor: Actor) -> None:
        first, second = await make_agent(session, actor), await make_agent(session, actor)
        await say(session, first, "from first")
        await say(session, second, "from second")
        service = MessageService(session, actor)
        assert texts(await service.list_all(HistoryQuery())) == ["from first", "from second"]
        assert texts(await service.list_all(HistoryQuery(order="desc", limit=1))) == ["from second"]
        stranger = MessageService(session, Actor(ids.DEFAULT_USER_ID, ids.DEFAULT_ORG_ID))
        assert "from first" not in texts(await stranger.list_all(HistoryQuery(limit=None)))

    async def test_retrieve_and_404s(self, session: AsyncSession, actor: Actor) -> None:
        agent = await make_agent(session, actor)
        (message_id,) = await say(session, agent, "find me")
        views = await MessageService(session, actor).retrieve(message_id)
        assert [(v.id, v.message_type) for v in views] == [(message_id, "user_message")]
        assert texts(views) == ["find me"]
        with pytest.raises(NotFoundError, match=f"Message with id {message_id} not found."):
            await MessageService(session, Actor(ids.DEFAULT_USER_ID, ids.DEFAULT_ORG_ID)).retrieve(message_id)


async def test_other_org_cannot_cancel_runs(session: AsyncSession, actor: Actor) -> None:
    agent = await make_agent(session, actor)
    run = orm.Run(
        id=ids.new_id(ids.Prefix.RUN), organization_id=actor.organization_id, agent_id=agent.id, status="running"
    )
    session.add(run)
    await session.flush()
    stranger = AgentMessageService(session, Actor(ids.DEFAULT_USER_ID, ids.DEFAULT_ORG_ID))
    with pytest.raises(NotFoundError):
        await stranger.cancel(agent.id, [run.id])
    assert run.status == "running"


async def test_cancel_waits_for_a_committing_step_instead_of_deadlocking(pg_uri: str) -> None:
    """A step commits under the agent's xact lock, then updates its run row. Cancel used to lock the run rows
    first and the agent second: a cancel landing mid-commit deadlocked with the loop (503), as Schemathesis
    found cancelling a large batch. Cancel now takes the agent's lock first."""
    engine = create_async_engine(async_url(pg_uri))
    makers = async_sessionmaker(engine, expire_on_commit=False)
    org_id = ids.new_id(ids.Prefix.ORGANIZATION)
    run_id = ids.new_id(ids.Prefix.RUN)
    try:
        async with makers() as setup, setup.begin():
            setup.add(orm.Organization(id=org_id, name="cancel-deadlock"))
            await setup.flush()
            agent = await make_agent(setup, Actor(ids.DEFAULT_USER_ID, org_id))
            setup.add(orm.Run(id=run_id, organization_id=org_id, agent_id=agent.id, status="running"))
        async with makers() as step, makers() as cancel:
            await step.begin()
            await agent_xact_lock(step, agent.id)  # a step's commit has begun

            async def cancel_it() -> dict[str, str]:
                async with cancel.begin():
                    return await cancel_runs(cancel, agent.id, [run_id])

            cancelling = asyncio.create_task(cancel_it())
            await asyncio.sleep(0.3)  # the cancel is now waiting on a lock
            await step.execute(update(orm.Run).where(orm.Run.id == run_id).values(num_steps=1))
            await step.commit()
            assert await asyncio.wait_for(cancelling, 10) == {run_id: "cancelled"}
        async with makers() as check:
            run = await check.get(orm.Run, run_id)
            assert run is not None and (run.num_steps, run.status) == (1, "cancelled")
    finally:
        async with makers() as cleanup, cleanup.begin():
            await cleanup.execute(delete(orm.Run).where(orm.Run.id == run_id))
            await cleanup.execute(delete(orm.Agent).where(orm.Agent.organization_id == org_id))
            await cleanup.execute(delete(orm.Organization).where(orm.Organization.id == org_id))
        await engine.dispose()


class TestAdd:
    async def test_one_statement_numbers_rows_in_list_order(self, session: AsyncSession, actor: Actor) -> None:
        """Any number of rows is one INSERT (one compiled statement), and sequence ids follow the list order."""
        agent = await make_agent(session, actor)
        statements: list[str] = []

        def record(_conn: object, _cursor: object, statement: str, *_: object) -> None:
            statements.append(statement)

        engine = session.bind.engine.sync_engine  # type: ignore[union-attr]
        event.listen(engine, "before_cursor_execute", record)
        try:
            first = await say(session, agent, "a", "b", "c", in_context=False)
            second = await say(session, agent, "d", in_context=False)
        finally:
            event.remove(engine, "before_cursor_execute", record)
        inserts = [s for s in statements if s.startswith("INSERT INTO messages")]
        assert len(inserts) == 2
        rows = (await session.scalars(select(orm.Message).where(orm.Message.id.in_(first + second)))).all()
        by_sequence = [r.id for r in sorted(rows, key=lambda r: r.sequence_id)]
        assert by_sequence == first + second
        assert all(r.created_at is not None and r.updated_at == r.created_at for r in rows)


class TestByIds:
    async def test_one_statement_text_for_any_window_length(self, session: AsyncSession, actor: Actor) -> None:
        """The in-context load is one prepared statement whatever the window's length (not `IN ($1..$n)`, which
        made a new statement, and a new plan, every turn as the window grew); rows come back in the asked order."""
        agent = await make_agent(session, actor)
        ids_ = await say(session, agent, "a", "b", "c", "d", "e", in_context=False)
        statements: list[str] = []

        def record(_conn: object, _cursor: object, statement: str, *_: object) -> None:
            statements.append(statement)

        engine = session.bind.engine.sync_engine  # type: ignore[union-attr]
        event.listen(engine, "before_cursor_execute", record)
        try:
            repo = MessageRepository(session)
            two = await repo.by_ids(agent.id, ids_[:2])
            five = await repo.by_ids(agent.id, list(reversed(ids_)))
        finally:
            event.remove(engine, "before_cursor_execute", record)
        assert [r.id for r in two] == ids_[:2]
        assert [r.id for r in five] == list(reversed(ids_))
        assert len(statements) == 2 and statements[0] == statements[1]
