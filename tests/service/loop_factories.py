"""Builders for agent-loop service tests: agents inserted as ORM rows (until the agents API exists).

Each agent gets its own organization, so tool names never collide between tests and deleting the organization
removes everything the test made (the loop commits its own transactions, so a rolled-back session cannot hold them).
"""

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet import ids
from memlet.agents.system_message import refresh_system_message
from memlet.config import Settings
from memlet.db import models as orm
from memlet.db.engine import create_engine, create_sessionmaker
from memlet.llm.chat_format import is_v2
from memlet.loop.events import LoopEvent, MessagesCommitted, RunFailed, RunFinished
from memlet.loop.runner import LoopDeps, RunOptions, default_llm_for, run_agent
from memlet.messages.requests import MessageCreate
from memlet.prompt.prompts import default_system_prompt
from memlet.tools.base_tools import BASE_TOOLS, base_tool_names_for, default_tool_rules_for


def llm_config(context_window: int = 128000, **overrides: Any) -> dict[str, Any]:
    """An OpenAI-style llm_config pointing at the mock LLM (its URL comes from settings.openai_base_url)."""
    config: dict[str, Any] = {
        "model": "gpt-4o-mini",
        "model_endpoint_type": "openai",
        "model_endpoint": None,
        "context_window": context_window,
        "put_inner_thoughts_in_kwargs": False,
        "temperature": 0.7,
        "max_tokens": None,
        "parallel_tool_calls": False,
    }
    config.update(overrides)
    return config


@dataclass
class CustomTool:
    name: str
    source_code: str
    json_schema: dict[str, Any]
    default_requires_approval: bool | None = None


async def make_agent(
    session: AsyncSession,
    *,
    agent_type: str = "letta_v1_agent",
    tools: Sequence[str] | None = None,
    custom_tools: Sequence[CustomTool] = (),
    tool_rules: list[dict[str, Any]] | None = None,
    blocks: dict[str, str] | None = None,
    block_limit: int = 5000,
    read_only: Sequence[str] = (),
    context_window: int = 128000,
    secrets: list[dict[str, str]] | None = None,
    system: str | None = None,
    embedding_config: dict[str, Any] | None = None,
    llm: dict[str, Any] | None = None,
    response_format: dict[str, Any] | None = None,
) -> orm.Agent:
    """Insert an agent with its own org, tools, blocks and a compiled system message; flushes, never commits."""
    org_id = ids.new_id(ids.Prefix.ORGANIZATION)
    session.add(orm.Organization(id=org_id, name="loop-test"))
    await session.flush()
    tool_names = list(tools) if tools is not None else base_tool_names_for(agent_type)
    rules = tool_rules if tool_rules is not None else default_tool_rules_for(agent_type, tool_names)
    # As attaching does: a tool whose default requires approval gets the agent's requires_approval rule.
    gated = [{"tool_name": c.name, "type": "requires_approval"} for c in custom_tools if c.default_requires_approval]
    rules = [*rules, *(g for g in gated if g not in rules)]
    agent = orm.Agent(
        id=ids.new_id(ids.Prefix.AGENT),
        organization_id=org_id,
        name="loop-agent",
        agent_type=agent_type,
        system=system if system is not None else default_system_prompt(agent_type),
        # V2 agents think in a tool argument, as the model catalog configures them; `llm` overrides fields.
        llm_config=llm_config(context_window, **{"put_inner_thoughts_in_kwargs": is_v2(agent_type), **(llm or {})}),
        tool_rules=rules,
        message_ids=[],
        secrets=secrets or [],
        timezone="UTC",
        embedding_config=embedding_config,
        response_format=response_format,
    )
    session.add(agent)
    await session.flush()
    rows: list[orm.Tool] = []
    for name in tool_names:
        fields = BASE_TOOLS[name].to_tool_fields()
        rows.append(orm.Tool(id=ids.new_id(ids.Prefix.TOOL), organization_id=org_id, **fields))
    for custom in custom_tools:
        rows.append(
            orm.Tool(
                id=ids.new_id(ids.Prefix.TOOL),
                organization_id=org_id,
                name=custom.name,
                tool_type="custom",
                source_type="python",
                source_code=custom.source_code,
                json_schema=custom.json_schema,
                default_requires_approval=custom.default_requires_approval,
                tags=[],
            )
        )
    session.add_all(rows)
    await session.flush()
    session.add_all(orm.ToolAgent(agent_id=agent.id, tool_id=t.id, position=i) for i, t in enumerate(rows))
    block_values = blocks if blocks is not None else {"persona": "I am a helpful agent.", "human": "Name: Sam"}
    for position, (label, value) in enumerate(block_values.items()):
        block = orm.Block(
            id=ids.new_id(ids.Prefix.BLOCK),
            organization_id=org_id,
            label=label,
            value=value,
            limit=block_limit,
            read_only=label in read_only,
            description=f"The {label} block.",
        )
        session.add(block)
        await session.flush()
        session.add(orm.BlockAgent(agent_id=agent.id, block_id=block.id, block_label=label, position=position))
    system_id = ids.new_id(ids.Prefix.MESSAGE)
    session.add(orm.Message(id=system_id, organization_id=org_id, agent_id=agent.id, role="system", content=[]))
    await session.flush()
    agent.message_ids = [system_id]
    await refresh_system_message(session, agent, update_timestamp=True)
    await session.flush()
    return agent


def function_schema(name: str, params: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    """A minimal OpenAI function schema for a custom tool."""
    return {
        "name": name,
        "description": f"The {name} tool.",
        "parameters": {"type": "object", "properties": params, "required": list(required)},
    }


@dataclass
class LoopEnv:
    """A real sessionmaker on the test database plus the loop's dependencies; cleans up its organizations."""

    sessionmaker: async_sessionmaker[AsyncSession]
    deps: LoopDeps
    org_ids: list[str]

    async def agent(self, **kwargs: Any) -> orm.Agent:
        async with self.sessionmaker() as session, session.begin():
            agent = await make_agent(session, **kwargs)
        self.org_ids.append(agent.organization_id)
        return agent

    async def send(self, agent: orm.Agent, *inputs: Any, **options: Any) -> "Outcome":
        """Run the loop to the end and collect its events."""
        items = [MessageCreate(role="user", content=i) if isinstance(i, str) else i for i in inputs]
        run_id = ids.new_id(ids.Prefix.RUN)
        events: list[LoopEvent] = []
        async for event in run_agent(
            self.deps,
            agent_id=agent.id,
            actor_org_id=agent.organization_id,
            run_id=run_id,
            inputs=items,
            options=RunOptions(**options),
        ):
            events.append(event)
        return Outcome(run_id=run_id, events=events)

    async def in_context(self, agent_id: str) -> list[orm.Message]:
        async with self.sessionmaker() as session:
            agent = await session.get(orm.Agent, agent_id)
            assert agent is not None
            rows = await session.scalars(select(orm.Message).where(orm.Message.id.in_(agent.message_ids)))
            by_id = {r.id: r for r in rows}
            return [by_id[i] for i in agent.message_ids]

    async def get(self, model: type, key: str) -> Any:
        async with self.sessionmaker() as session:
            return await session.get(model, key)


@dataclass
class Outcome:
    run_id: str
    events: list[LoopEvent]

    @property
    def final(self) -> RunFinished | RunFailed:
        last = self.events[-1]
        assert isinstance(last, RunFinished | RunFailed)
        return last

    @property
    def messages(self) -> list[Any]:
        return [m for e in self.events if isinstance(e, MessagesCommitted) for m in e.messages]


@pytest.fixture
async def loop_env(settings: Settings, mock_llm: Any) -> AsyncIterator[LoopEnv]:
    mock_llm.reset()
    engine = create_engine(settings.pg_uri or "", settings)
    maker = create_sessionmaker(engine)

    deps = LoopDeps(sessionmaker=maker, settings=settings, llm_for=default_llm_for(settings, maker))
    env = LoopEnv(sessionmaker=maker, deps=deps, org_ids=[])
    try:
        yield env
    finally:
        async with maker() as session, session.begin():
            if env.org_ids:
                await session.execute(delete(orm.Organization).where(orm.Organization.id.in_(env.org_ids)))
        await engine.dispose()
        mock_llm.reset()
