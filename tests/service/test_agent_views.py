"""`agents/views.py` reads a fully loaded ORM row from its ``__dict__`` (faster than through its attributes): the
state it builds is the same either way, and a row with an expired column is read through its attributes."""

import pytest
from sqlalchemy import inspect
from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.agents.schemas import CreateAgent
from memlet.agents.service import AgentService
from memlet.agents.views import ALL_RELATIONSHIPS, _Attributes, agent_state, loaded
from memlet.blocks.schemas import Block
from memlet.config import Settings
from memlet.db import models as orm
from memlet.db.loaded import column_keys
from memlet.providers.catalog import ModelCatalog
from memlet.tools.service import ToolService

LLM = {"model": "gpt-4o-mini", "model_endpoint_type": "openai", "context_window": 128000, "temperature": 0.25}


@pytest.fixture
async def actor(session: AsyncSession) -> Actor:
    org_id = ids.new_id(ids.Prefix.ORGANIZATION)
    session.add(orm.Organization(id=org_id, name="views-test"))
    await session.flush()
    return Actor(ids.DEFAULT_USER_ID, org_id)


async def test_a_loaded_row_gives_the_state_its_attributes_give(session: AsyncSession, actor: Actor) -> None:
    service = AgentService(session, ModelCatalog(Settings(_env_file=None)))  # type: ignore[call-arg]
    await ToolService(session).add_base_tools(actor)
    created = await service.create(
        actor,
        CreateAgent.model_validate(
            {
                "name": "rich",
                "llm_config": LLM,
                "description": "dësc",
                "metadata": {"k": [1, 2.5, None]},
                "memory_blocks": [
                    {"label": "human", "value": "Bob", "metadata": {"x": 1}},
                    {"label": "persona", "value": "Sam"},
                ],
                "tags": ["b", "a"],
                "secrets": {"TOKEN": "t"},
                "include_base_tools": True,
                "tool_rules": [{"type": "exit_loop", "tool_name": "send_message"}],
                "timezone": "Europe/Paris",
            }
        ),
    )
    (row,) = await service.agents.by_ids([created.id])
    await session.refresh(row)
    relations = (await service.relations([row], ALL_RELATIONSHIPS))[row.id]
    assert loaded(row) is row.__dict__  # every column loaded: the fast path
    fast = agent_state(row, relations)
    session.expire(row, ["message_count"])  # one column expired: read through the attributes
    assert isinstance(loaded(row), _Attributes)
    slow = agent_state(row, relations)
    assert fast.model_dump_json() == slow.model_dump_json()
    assert fast.tags == ["a", "b"] and fast.secrets and len(fast.blocks) == 2 and fast.tools and fast.tool_rules
    for block in relations.blocks:
        assert Block.model_validate(block.__dict__) == Block.model_validate(block)


async def test_a_page_reads_its_blocks_and_tools_as_detached_rows_equal_to_the_orm_rows(
    session: AsyncSession, actor: Actor
) -> None:
    """`for_agents` reads on the driver (the ORM's loading was most of a page's relation cost): the rows are not the
    session's, and hold what the ORM would load."""
    service = AgentService(session, ModelCatalog(Settings(_env_file=None)))  # type: ignore[call-arg]
    await ToolService(session).add_base_tools(actor)
    created = [
        await service.create(
            actor,
            CreateAgent.model_validate(
                {
                    "name": f"paged-{n}",
                    "llm_config": LLM,
                    "memory_blocks": [{"label": "human", "value": f"Bob {n}", "metadata": {"n": n}}],
                    "include_base_tools": True,
                }
            ),
        )
        for n in range(2)
    ]
    agent_ids = [a.id for a in created]
    blocks, tools = await service.blocks.for_agents(agent_ids), await service.tools.for_agents(agent_ids)
    for agent in created:
        assert [b.id for b in blocks[agent.id]] == [b.id for b in agent.blocks]
        assert [t.id for t in tools[agent.id]] == [t.id for t in agent.tools]
    rows = [*(b for bs in blocks.values() for b in bs), *(t for ts in tools.values() for t in ts)]
    assert rows and all(inspect(row).detached for row in rows)
    for row in rows:
        orm_row = await session.get(type(row), row.id)
        assert orm_row is not None and orm_row is not row
        keys = column_keys(type(row))
        assert {k: row.__dict__[k] for k in keys} == {k: getattr(orm_row, k) for k in keys}
