"""The rows the driver statements write (`memlet.db.driver`) are the rows SQLAlchemy wrote before: a step as the
ORM's unit of work inserted it (SQL NULL, not JSON null, in the JSONB columns it never set), and messages as Core's
INSERT did (JSON null for a None it was given; NULs dropped and lone surrogates replaced by memlet's serializer)."""

from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.config import Settings
from memlet.db import models as orm
from memlet.db.engine import create_engine, create_sessionmaker
from memlet.messages import repository as messages_repository
from memlet.messages.repository import MessageRepository
from memlet.runs.step_repository import StepRepository
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
