"""The rows the driver statements write (`memlet.db.driver`) are the rows SQLAlchemy wrote before: a step as the
ORM's unit of work inserted it (SQL NULL, not JSON null, in the JSONB columns it never set), and messages as Core's
INSERT did (JSON null for a None it was given; NULs dropped and lone surrogates replaced by memlet's serializer)."""

from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import inspect, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.agents.repository import AgentRepository
from memlet.blocks.repository import BlockRepository
from memlet.config import Settings
from memlet.conversations.repository import ConversationRepository
from memlet.db import models as orm
from memlet.db.driver import driver_of
from memlet.db.engine import create_engine, create_sessionmaker
from memlet.messages import repository as messages_repository
from memlet.messages.repository import MessageRepository
from memlet.runs.repository import RunRepository
from memlet.runs.run_statements import RunEnd
from memlet.runs.step_repository import StepRepository
from memlet.runs.step_write import write_step
from tests.service.loop_factories import make_agent


@pytest.fixture
async def memlet_session(pg_uri: str) -> AsyncIterator[AsyncSession]:
    """A session on memlet's own engine (its JSON serializer), inside a transaction rolled back after the test."""
    engine = create_engine(pg_uri, Settings())
    try:
        async with create_sessionmaker(engine)() as session, session.begin():
            yield session
            await session.rollback()
    finally:
        await engine.dispose()


async def _columns(session: AsyncSession, table: str, row_id: str, skip: tuple[str, ...]) -> dict[str, Any]:
    """Each column of a row as (is SQL NULL, its text): JSON null and SQL NULL differ here."""
    names = (await session.execute(text(f"SELECT * FROM {table} LIMIT 0"))).keys()
    listed = ", ".join(f'"{n}" IS NULL, "{n}"::text' for n in names if n not in skip)
    row = (await session.execute(text(f"SELECT {listed} FROM {table} WHERE id = :id"), {"id": row_id})).one()
    kept = [n for n in names if n not in skip]
    return {name: (row[2 * i], row[2 * i + 1]) for i, name in enumerate(kept)}


def _step(agent: orm.Agent, run_id: str | None) -> orm.Step:
    step = orm.Step(
        id=ids.new_id(ids.Prefix.STEP),
        organization_id=agent.organization_id,
        agent_id=agent.id,
        run_id=run_id,
        provider_name="openai",
        provider_category="base",
        model="gpt-4o-mini",
        context_window_limit=128000,
        status="pending",
        tags=[],
    )
    step.prompt_tokens, step.completion_tokens, step.total_tokens = 10, 2, 12
    step.cached_input_tokens, step.reasoning_tokens, step.cache_write_tokens = None, None, None
    step.status, step.stop_reason = "success", "end_turn"
    return step


async def test_a_step_row_is_the_row_the_orm_wrote(memlet_session: AsyncSession) -> None:
    session = memlet_session
    agent = await make_agent(session)
    by_orm, by_driver = _step(agent, None), _step(agent, None)
    session.add(by_orm)
    await session.flush()
    await StepRepository(session).insert(by_driver)
    skip = ("id", "created_at", "updated_at")
    orm_row = await _columns(session, "steps", by_orm.id, skip)
    driver_row = await _columns(session, "steps", by_driver.id, skip)
    assert driver_row == orm_row
    assert driver_row["error_data"] == (True, None) and driver_row["step_metrics"] == (True, None)  # SQL NULL
    assert driver_row["tags"] == (False, "[]")
    stamps = await session.execute(
        text("SELECT created_at, updated_at FROM steps WHERE id = :id"), {"id": by_driver.id}
    )
    created, updated = stamps.one()
    assert created == by_driver.created_at and updated == by_driver.updated_at and created <= updated


def _messages(agent: orm.Agent) -> list[orm.Message]:
    text_with_nul = "before\x00after \ud800 lone"
    return [
        orm.Message(
            id=ids.new_id(ids.Prefix.MESSAGE),
            organization_id=agent.organization_id,
            agent_id=agent.id,
            role="user",
            content=[{"type": "text", "text": text_with_nul}],
        ),
        orm.Message(
            id=ids.new_id(ids.Prefix.MESSAGE),
            organization_id=agent.organization_id,
            agent_id=agent.id,
            role="assistant",
            content=None,
            tool_calls=[{"id": "call-1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        ),
    ]


async def test_messages_are_the_rows_core_wrote(memlet_session: AsyncSession, monkeypatch: pytest.MonkeyPatch) -> None:
    session = memlet_session
    agent = await make_agent(session)
    by_driver = _messages(agent)
    await MessageRepository(session).add(by_driver)
    monkeypatch.setattr(messages_repository, "_DRIVER_MAX_ROWS", 0)  # Core's INSERT, as before the driver
    by_core = _messages(agent)
    await MessageRepository(session).add(by_core)
    assert by_driver[0].sequence_id < by_driver[1].sequence_id < by_core[0].sequence_id  # in list order
    skip = ("id", "sequence_id", "created_at", "updated_at")
    for driven, cored in zip(by_driver, by_core, strict=True):
        driver_row = await _columns(session, "messages", driven.id, skip)
        assert driver_row == await _columns(session, "messages", cored.id, skip)
    first = await _columns(session, "messages", by_driver[0].id, skip)
    assert "\\u0000" not in first["content"][1] and "before" in first["content"][1]
    assert (await _columns(session, "messages", by_driver[1].id, skip))["content"] == (False, "null")  # JSON null


async def test_the_one_statement_step_write_equals_the_four_statements(memlet_session: AsyncSession) -> None:
    """`runs.step_write` (the step commit's one statement) writes the rows the four statements write: the step,
    the messages (in list order), the agent's message_ids, last stop reason and message count, and the run's end."""
    session = memlet_session
    agent = await make_agent(session)
    run_ids = [ids.new_id(ids.Prefix.RUN), ids.new_id(ids.Prefix.RUN)]
    for run_id in run_ids:
        session.add(orm.Run(id=run_id, organization_id=agent.organization_id, agent_id=agent.id, status="running"))
    await session.flush()
    end = RunEnd(status="completed", stop_reason="end_turn", duration_ns=1234)
    one_step, one_rows = _step(agent, run_ids[0]), _messages(agent)
    written = await write_step(
        session,
        agent_id=agent.id,
        conversation_id=None,
        run_id=run_ids[0],
        step=one_step,
        rows=one_rows,
        num_steps=2,
        tools_used=["f"],
        last_stop_reason="end_turn",
        end=end,
    )
    four_step, four_rows = _step(agent, run_ids[1]), _messages(agent)
    await StepRepository(session).insert(four_step)
    await MessageRepository(session).add(four_rows)
    appended = await AgentRepository(session).append_message_ids(
        agent.id, [r.id for r in four_rows], last_stop_reason="end_turn"
    )
    status = await RunRepository(session).record_progress(run_ids[1], num_steps=2, tools_used=["f"], end=end)
    assert written.run_status == status == "completed"
    assert written.message_ids == appended[: len(written.message_ids)]
    assert appended[-4:] == [r.id for r in (*one_rows, *four_rows)]
    sequences = [r.sequence_id for r in (*one_rows, *four_rows)]
    assert sequences == sorted(sequences) and len(set(sequences)) == 4
    skip = ("id", "run_id", "created_at", "updated_at")
    assert await _columns(session, "steps", one_step.id, skip) == await _columns(session, "steps", four_step.id, skip)
    skip = ("id", "sequence_id", "created_at", "updated_at")
    for one, four in zip(one_rows, four_rows, strict=True):
        assert await _columns(session, "messages", one.id, skip) == await _columns(session, "messages", four.id, skip)
    skip = ("id", "created_at", "updated_at", "completed_at")
    assert await _columns(session, "runs", run_ids[0], skip) == await _columns(session, "runs", run_ids[1], skip)
    stored = (
        await session.execute(
            text("SELECT message_ids, last_stop_reason, message_count FROM agents WHERE id = :id"), {"id": agent.id}
        )
    ).one()
    assert (stored.message_ids, stored.last_stop_reason) == (appended, "end_turn")
    counted = await session.scalar(text("SELECT count(*) FROM messages WHERE agent_id = :id"), {"id": agent.id})
    assert stored.message_count == counted  # the count triggers ran for the one statement too


async def test_a_cancelled_run_stays_cancelled_through_the_one_statement(memlet_session: AsyncSession) -> None:
    session = memlet_session
    agent = await make_agent(session)
    run_id = ids.new_id(ids.Prefix.RUN)
    session.add(orm.Run(id=run_id, organization_id=agent.organization_id, agent_id=agent.id, status="cancelled"))
    await session.flush()
    written = await write_step(
        session,
        agent_id=agent.id,
        conversation_id=None,
        run_id=run_id,
        step=None,
        rows=_messages(agent)[:1],
        num_steps=1,
        tools_used=[],
        last_stop_reason=None,
        end=RunEnd(status="completed", stop_reason="end_turn"),
    )
    assert written.run_status == "cancelled"
    run = (await session.execute(text("SELECT status, stop_reason FROM runs WHERE id = :id"), {"id": run_id})).one()
    assert tuple(run) == ("cancelled", "cancelled")


async def test_the_one_statement_step_write_in_a_conversation(memlet_session: AsyncSession) -> None:
    """In a conversation the one statement appends to the conversation's window, links the rows to its history and
    records the agent's last stop reason, as `ConversationRepository.append_message_ids` and
    `AgentRepository.set_last_stop_reason` do; the agent's own window is left alone."""
    session = memlet_session
    agent = await make_agent(session)
    agent_window = list(agent.message_ids or [])
    conversations = []
    for _ in range(2):
        conversation = orm.Conversation(
            id=ids.new_id(ids.Prefix.CONVERSATION),
            organization_id=agent.organization_id,
            agent_id=agent.id,
            message_ids=agent_window[:1],
        )
        session.add(conversation)
        conversations.append(conversation.id)
    run_id = ids.new_id(ids.Prefix.RUN)
    session.add(orm.Run(id=run_id, organization_id=agent.organization_id, agent_id=agent.id, status="running"))
    await session.flush()
    one_rows, four_rows = _messages(agent), _messages(agent)
    for rows, conversation_id in ((one_rows, conversations[0]), (four_rows, conversations[1])):
        for row in rows:
            row.conversation_id = conversation_id
    written = await write_step(
        session,
        agent_id=agent.id,
        conversation_id=conversations[0],
        run_id=run_id,
        step=None,
        rows=one_rows,
        num_steps=1,
        tools_used=[],
        last_stop_reason="end_turn",
        end=None,
    )
    await MessageRepository(session).add(four_rows)
    appended = await ConversationRepository(session).append_message_ids(conversations[1], [r.id for r in four_rows])
    assert written.message_ids == [*agent_window[:1], *(r.id for r in one_rows)]
    assert appended == [*agent_window[:1], *(r.id for r in four_rows)]
    skip = ("id", "sequence_id", "created_at", "updated_at", "conversation_id")
    for one, four in zip(one_rows, four_rows, strict=True):
        assert await _columns(session, "messages", one.id, skip) == await _columns(session, "messages", four.id, skip)
    linked = await session.execute(
        text("SELECT conversation_id, message_id FROM conversation_messages WHERE message_id = ANY(:ids)"),
        {"ids": [r.id for r in (*one_rows, *four_rows)]},
    )
    assert sorted(linked.all()) == sorted(
        [(conversations[0], r.id) for r in one_rows] + [(conversations[1], r.id) for r in four_rows]
    )
    stored = (
        await session.execute(text("SELECT message_ids, last_stop_reason FROM agents WHERE id = :id"), {"id": agent.id})
    ).one()
    assert (stored.message_ids, stored.last_stop_reason) == (agent_window, "end_turn")


async def test_a_conversation_its_agent_and_their_blocks_in_one_statement(memlet_session: AsyncSession) -> None:
    """`ConversationRepository.find_with_agent` (a turn's load in a conversation) gives the rows
    `AgentRepository.find_with_memory`, `find` and `blocks_of` give, as detached rows, or None unless the conversation
    is the agent's; a window set on such a row is still written (`set_message_ids` writes by statement)."""
    session = memlet_session
    agent = await make_agent(session)
    other = await make_agent(session)
    conversation_id = ids.new_id(ids.Prefix.CONVERSATION)
    session.add(
        orm.Conversation(
            id=conversation_id, organization_id=agent.organization_id, agent_id=agent.id, message_ids=["m-1"]
        )
    )
    await session.flush()
    blocks = await BlockRepository(session).of_agent(agent.id)
    assert len(blocks) >= 2
    for block in blocks:
        session.add(orm.ConversationBlock(conversation_id=conversation_id, block_id=block.id, block_label=block.label))
    await session.flush()
    repo = ConversationRepository(session)
    org = agent.organization_id
    assert await repo.find_with_agent(org, "conv-00000000-0000-4000-8000-000000000000", agent.id) is None
    assert await repo.find_with_agent("org-elsewhere", conversation_id, agent.id) is None
    assert await repo.find_with_agent(org, conversation_id, other.id) is None
    found = await repo.find_with_agent(org, conversation_id, agent.id)
    assert found is not None
    loaded, conversation, isolated = found
    alone = await AgentRepository(session).find_with_memory(org, agent.id)
    assert alone is not None
    for column in orm.Agent.__table__.columns.keys():  # noqa: SIM118
        assert getattr(loaded.agent, column) == getattr(alone.agent, column), column
    assert [b.id for b in loaded.blocks] == [b.id for b in alone.blocks] and loaded.blocks
    assert [t.id for t in loaded.tools] == [t.id for t in alone.tools] and loaded.tools
    stored = await repo.find(org, conversation_id)
    assert stored is not None and conversation is not stored
    for column in orm.Conversation.__table__.columns.keys():  # noqa: SIM118
        assert getattr(conversation, column) == getattr(stored, column), column
    expected = await repo.blocks_of(conversation_id)
    assert [(b.id, b.label, b.value) for b in isolated] == [(b.id, b.label, b.value) for b in expected]
    assert [b.label for b in isolated] == sorted(b.label for b in blocks)
    session.expunge_all()
    await repo.set_message_ids(conversation, ["m-2", "m-1"])
    again = await repo.find(org, conversation_id)
    assert again is not None and again.message_ids == ["m-2", "m-1"] == conversation.message_ids


async def test_a_message_search_reads_rows_on_the_driver(memlet_session: AsyncSession) -> None:
    """`MessageRepository.search_via` (every `conversation_search`) runs on the driver: detached entities, no ORM
    loading, equal column by column to the rows the ORM reads, in the ranking's order."""
    session = memlet_session
    agent = await make_agent(session)
    texts = ["I like green tea", "teapots are nice", "coffee only", "tea? tea!"]
    rows = [
        orm.Message(
            id=ids.new_id(ids.Prefix.MESSAGE),
            organization_id=agent.organization_id,
            agent_id=agent.id,
            role="user",
            content=[{"type": "text", "text": text}],
        )
        for text in texts
    ]
    await MessageRepository(session).add(rows)
    driver = await driver_of(session)
    found = await MessageRepository.search_via(
        driver, agent.id, query="tea", roles=["user"], start=None, end=None, limit=10
    )
    assert {r.id for r in found} == {rows[0].id, rows[1].id, rows[3].id}  # word prefixes: "tea", "teapots"
    substring = await MessageRepository.search_via(
        driver, agent.id, query="pot", roles=["user"], start=None, end=None, limit=10
    )
    assert [r.id for r in substring] == [rows[1].id]  # no word starts with "pot": the substring fallback
    found = [*found, *substring]
    assert all(inspect(r).detached for r in found)
    session.expunge_all()
    by_orm = {
        r.id: r for r in await session.scalars(select(orm.Message).where(orm.Message.id.in_([r.id for r in rows])))
    }
    for row in found:
        for column in orm.Message.__mapper__.column_attrs.keys():  # noqa: SIM118
            assert getattr(row, column) == getattr(by_orm[row.id], column), column
