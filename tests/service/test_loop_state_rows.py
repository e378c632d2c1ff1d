"""The loop's in-context buffer is read as plain `MessageRow`s on the driver (no ORM entity per message per step),
in window order, with every column the ORM row has; the agent, its blocks and its tools in one statement as detached
ORM rows equal to the session's; a stale system message comes back rewritten, its recompile time stored."""

from datetime import timedelta
from typing import Any

from sqlalchemy import event, inspect, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.agents.repository import AgentRepository
from memlet.agents.system_message import refresh_if_stale
from memlet.blocks.repository import BlockRepository
from memlet.db import models as orm
from memlet.db.base import Base, utcnow
from memlet.db.message_row import MessageRow
from memlet.loop.agent_state import LoopRepository
from memlet.loop.runner import RunOptions, run_agent
from memlet.messages.repository import MessageRepository
from memlet.messages.requests import MessageCreate
from memlet.runs.run_statements import RunStart
from memlet.tools.repository import ToolRepository
from tests.mock_llm import Reply
from tests.service.loop_factories import LoopEnv, loop_env, make_agent
from tests.service.test_turn_statements import orm_statements

__all__ = ["loop_env"]


def test_the_row_has_every_column_of_the_table() -> None:
    assert list(MessageRow._fields) == [c.key for c in orm.Message.__mapper__.column_attrs]


async def _window(session: AsyncSession, agent: orm.Agent) -> list[str]:
    rows = [
        orm.Message(
            id=ids.new_id(ids.Prefix.MESSAGE),
            organization_id=agent.organization_id,
            agent_id=agent.id,
            role=role,
            content=[{"type": "text", "text": f"{role} {i}"}],
            tool_calls=[{"id": "call-1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
            if role == "assistant"
            else None,
            tool_call_id="call-1" if role == "tool" else None,
            run_id="run-1",
        )
        for i, role in enumerate(["user", "assistant", "tool"])
    ]
    await MessageRepository(session).add(rows)
    # Window order is not insertion order: the load must follow message_ids.
    agent.message_ids = [*agent.message_ids, rows[2].id, rows[0].id, rows[1].id]
    await session.flush()
    return agent.message_ids


async def test_in_context_rows_skip_the_orm_and_match_its_rows(session: AsyncSession) -> None:
    agent = await make_agent(session)
    window = await _window(session, agent)
    other = await make_agent(session)  # another agent's message in the list is skipped, as by_ids does
    repo = LoopRepository(session)
    with orm_statements(session) as seen:
        rows = await repo.messages.in_context(agent.id, [*window, other.message_ids[0], "message-unknown"])
    assert seen == []
    assert all(type(r) is MessageRow for r in rows)
    entities = await repo.messages.by_ids(agent.id, window)
    assert [r.id for r in rows] == window
    assert [r._asdict() for r in rows] == [{f: getattr(e, f) for f in MessageRow._fields} for e in entities]

    state = await repo.load_state(agent.id, agent.organization_id)
    assert state is not None and state.messages == rows


async def test_a_stale_system_message_comes_back_rewritten(session: AsyncSession) -> None:
    agent = await make_agent(session, blocks={"human": "Name: Sam"})
    state = await LoopRepository(session).load_state(agent.id, agent.organization_id)
    assert state is not None
    system = state.messages[0]
    assert await refresh_if_stale(session, agent, state.blocks, system) is system  # nothing changed

    later = utcnow() + timedelta(seconds=5)
    block = state.blocks[0]
    await session.execute(update(orm.Block).where(orm.Block.id == block.id).values(value="Name: Ada", updated_at=later))
    blocks = await BlockRepository(session).of_agent(agent.id)
    fresh = await refresh_if_stale(session, agent, blocks, system)
    assert type(fresh) is MessageRow and fresh.id == system.id
    text = fresh.content[0]["text"] if fresh.content else ""
    assert "Name: Ada" in text and "Name: Ada" not in str(system.content)


def _columns(row: Base) -> dict[str, object]:
    return {attr.key: getattr(row, attr.key) for attr in inspect(type(row)).column_attrs}


async def test_agent_blocks_and_tools_load_in_one_statement_as_detached_rows(session: AsyncSession) -> None:
    agent = await make_agent(session, blocks={"persona": "I am Sam.", "human": "Name: Ada", "notes": "none"})
    # Attachment order is the position, not the insertion or label order.
    await session.execute(update(orm.BlockAgent).where(orm.BlockAgent.block_label == "persona").values(position=9))
    repo = LoopRepository(session)
    with orm_statements(session) as seen:
        state = await repo.load_state(agent.id, agent.organization_id)
    assert seen == []
    assert state is not None
    blocks = await BlockRepository(session).of_agent(agent.id)
    tools = await ToolRepository(session).of_agent(agent.id)
    assert [b.label for b in state.blocks] == ["human", "notes", "persona"] == [b.label for b in blocks]
    stored = await AgentRepository(session).reload(agent.id)  # the row as it is now (triggers keep counters)
    assert stored is not None and _columns(state.agent) == _columns(stored)
    assert [_columns(b) for b in state.blocks] == [_columns(b) for b in blocks]
    assert [_columns(t) for t in state.tools] == [_columns(t) for t in tools] and tools
    for row in [state.agent, *state.blocks, *state.tools]:  # as if loaded by a session since closed
        assert inspect(row).detached and not inspect(row).modified
        assert row not in session
    assert await repo.load_state(agent.id, "org-other") is None
    assert await repo.load_state("agent-unknown", agent.organization_id) is None


async def test_an_agent_without_blocks_or_tools_loads_empty_lists(session: AsyncSession) -> None:
    agent = await make_agent(session, tools=[], blocks={})
    state = await LoopRepository(session).load_state(agent.id, agent.organization_id)
    assert state is not None and state.blocks == [] and state.tools == []


async def test_a_stale_refresh_of_the_loaded_agent_keeps_its_recompile_time(session: AsyncSession) -> None:
    """As Letta rebuilds another holder of an edited block (`update_timestamp=False`): the time stays."""
    agent = await make_agent(session, blocks={"human": "Name: Sam"})
    state = await LoopRepository(session).load_state(agent.id, agent.organization_id)
    assert state is not None
    before = state.agent.system_compiled_at
    assert before is not None
    later = utcnow() + timedelta(seconds=5)
    block = state.blocks[0]
    await session.execute(update(orm.Block).where(orm.Block.id == block.id).values(value="Name: Ada", updated_at=later))
    blocks = await BlockRepository(session).of_agent(agent.id)
    fresh = await refresh_if_stale(session, state.agent, blocks, state.messages[0])
    assert "Name: Ada" in str(fresh.content)
    await session.flush()
    stored = await session.scalar(select(orm.Agent.system_compiled_at).where(orm.Agent.id == agent.id))
    assert stored == before
    assert state.agent.system_compiled_at == stored and not inspect(state.agent).modified


async def test_a_turn_after_an_outside_block_edit_sends_and_stores_the_recompiled_prompt(
    loop_env: LoopEnv, mock_llm: Any
) -> None:
    """The turn's load runs in autocommit (no transaction around it): the stale prompt's rewrite must still be
    stored, with its recompile time kept, and the model must be sent the new block."""
    agent = await loop_env.agent(blocks={"human": "Name: Sam"})
    async with loop_env.sessionmaker() as session, session.begin():
        before = await session.scalar(select(orm.Agent.system_compiled_at).where(orm.Agent.id == agent.id))
        later = utcnow() + timedelta(seconds=5)
        await session.execute(
            update(orm.Block)
            .where(orm.Block.id.in_(select(orm.BlockAgent.block_id).where(orm.BlockAgent.agent_id == agent.id)))
            .values(value="Name: Ada", updated_at=later)
        )
    mock_llm.script(Reply.text("hi"))
    sent_before = len(mock_llm.requests)
    async for _ in run_agent(
        loop_env.deps,
        agent_id=agent.id,
        actor_org_id=agent.organization_id,
        run_id=ids.new_id(ids.Prefix.RUN),
        inputs=[MessageCreate(role="user", content="hello")],
        options=RunOptions(),
    ):
        pass
    sent = mock_llm.requests[sent_before:]
    assert len(sent) == 1 and "Name: Ada" in str(sent[0]["messages"][0]["content"])
    async with loop_env.sessionmaker() as session:
        stored = await session.scalar(select(orm.Agent.system_compiled_at).where(orm.Agent.id == agent.id))
        system_id = (await session.scalar(select(orm.Agent.message_ids).where(orm.Agent.id == agent.id)))[0]
        text = await session.scalar(select(orm.Message.content).where(orm.Message.id == system_id))
    assert before is not None and stored == before
    assert "Name: Ada" in str(text)


async def test_a_turns_load_starts_its_run_in_its_first_statement(session: AsyncSession) -> None:
    """`load_and_start` (every turn's first load): the state `load_state` reads, and the run started (inserted as
    running, or a created row promoted and leased) in the statement that reads the agent; a run cancelled before
    its loop started stays cancelled; an agent that is gone loads nothing, and its run is started all the same."""
    agent = await make_agent(session)
    org = agent.organization_id
    repo = LoopRepository(session)
    statements: list[str] = []

    def record(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        statements.append(statement)

    engine = session.bind.sync_engine
    created, cancelled, orphan = (ids.new_id(ids.Prefix.RUN) for _ in range(3))
    for run_id, status in ((created, "created"), (cancelled, "cancelled")):
        session.add(orm.Run(id=run_id, agent_id=agent.id, organization_id=org, status=status, num_steps=0))
    await session.flush()
    leased = RunStart(created, agent.id, org, metadata={"run_type": "t"}, worker_id="worker-1", lease_s=30.0)
    event.listen(engine, "before_cursor_execute", record)
    try:
        state, status = await repo.load_and_start(agent.id, org, None, leased)
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert status == "running" and state is not None
    alone = await repo.load_state(agent.id, org)
    assert alone is not None and _columns(state.agent) == _columns(alone.agent)
    assert [b.id for b in state.blocks] == [b.id for b in alone.blocks] and state.messages == alone.messages
    # The start and the agent in one statement, then the window.
    assert len(statements) == 2 and "INSERT INTO runs" in statements[0], statements
    run = await session.get(orm.Run, created, populate_existing=True)
    assert run is not None and (run.status, run.worker_id) == ("running", "worker-1") and run.lease_expires_at

    _, status = await repo.load_and_start(agent.id, org, None, RunStart(cancelled, agent.id, org))
    assert status == "cancelled"
    gone, _ = await repo.load_and_start("agent-unknown", org, None, RunStart(orphan, agent.id, org))
    assert gone is None
    run = await session.get(orm.Run, orphan, populate_existing=True)
    assert run is not None and run.status == "running"


async def test_a_turns_load_in_a_conversation_starts_its_run_too(session: AsyncSession) -> None:
    agent = await make_agent(session)
    org = agent.organization_id
    conversation_id = ids.new_id(ids.Prefix.CONVERSATION)
    session.add(orm.Conversation(id=conversation_id, organization_id=org, agent_id=agent.id, message_ids=[]))
    await session.flush()
    repo = LoopRepository(session)
    run_id = ids.new_id(ids.Prefix.RUN)
    start = RunStart(run_id, agent.id, org, conversation_id=conversation_id)
    state, status = await repo.load_and_start(agent.id, org, conversation_id, start)
    assert status == "running" and state is not None and state.conversation is not None
    assert state.conversation.id == conversation_id and state.messages == []
    run = await session.get(orm.Run, run_id, populate_existing=True)
    assert run is not None and run.conversation_id == conversation_id
    other = ids.new_id(ids.Prefix.RUN)
    missing, _ = await repo.load_and_start(
        agent.id, org, "conv-00000000-0000-4000-8000-000000000000", RunStart(other, agent.id, org)
    )
    assert missing is None
