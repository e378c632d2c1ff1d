"""ToolService and AgentToolService against real Postgres: schemas, names, upserts, base tools, approval rules."""

from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.agents.tool_links import AgentToolService, with_approval
from memlet.db import models as orm
from memlet.db.pagination import Page
from memlet.errors import BadRequestError, NotFoundError
from memlet.tools.base_tools import BASE_TOOLS
from memlet.tools.repository import ToolFilters
from memlet.tools.schemas import ToolCreate, ToolUpdate
from memlet.tools.service import ToolService

GREET = '''
def greet(name: str, excited: bool = False) -> str:
    """Greet someone.

    Args:
        name: Who to greet.
        excited: Whether to shout.
    """
    return f"Hello {name}"
'''

GREET_V2 = '''
def greet(name: str, times: int = 1) -> str:
    """Greet someone several times.

    Args:
        name: Who to greet.
        times: How often.
    """
    return f"Hello {name}" * times
'''


async def make_org(session: AsyncSession) -> str:
    org_id = ids.new_id(ids.Prefix.ORGANIZATION)
    session.add(orm.Organization(id=org_id, name="tools-test"))
    await session.flush()
    return org_id


@pytest.fixture
async def actor(session: AsyncSession) -> Actor:
    """A fresh organization per test, so names never collide with other tests or the default org."""
    return Actor(ids.DEFAULT_USER_ID, await make_org(session))


@pytest.fixture
def service(session: AsyncSession) -> ToolService:
    return ToolService(session)


async def make_agent(session: AsyncSession, actor: Actor, tool_rules: list[dict[str, Any]] | None = None) -> orm.Agent:
    agent = orm.Agent(
        id=ids.new_id(ids.Prefix.AGENT),
        organization_id=actor.organization_id,
        name="tool-agent",
        system="test",
        llm_config={"model": "gpt-4o-mini", "model_endpoint_type": "openai", "context_window": 128000},
        tool_rules=tool_rules or [],
        message_ids=[],
    )
    session.add(agent)
    await session.flush()
    return agent


class TestCreate:
    async def test_derives_name_schema_description_and_hash(self, service: ToolService, actor: Actor) -> None:
        tool = await service.create(actor, ToolCreate(source_code=GREET, tags=["t"]))
        assert tool.id.startswith("tool-")
        assert tool.name == "greet"
        assert tool.tool_type == "custom"
        assert tool.description == "Greet someone."
        assert tool.json_schema is not None
        assert tool.json_schema["parameters"]["required"] == ["name"]
        assert tool.tags == ["t"]
        assert len(tool.metadata_["tool_hash"]) == 12  # type: ignore[index]
        assert tool.source_type == "json" and tool.args_json_schema == {}  # Letta's column defaults
        # Absent JSON values are SQL NULL, not the JSON literal null.
        stored_null = await service.session.scalar(
            select(orm.Tool.pip_requirements.is_(None)).where(orm.Tool.id == tool.id)
        )
        assert stored_null is True

    async def test_same_name_twice_updates_the_same_row(self, service: ToolService, actor: Actor) -> None:
        first = await service.create(actor, ToolCreate(source_code=GREET))
        second = await service.create(actor, ToolCreate(source_code=GREET_V2))
        assert second.id == first.id

    async def test_same_name_in_another_org_is_fine(
        self, service: ToolService, actor: Actor, session: AsyncSession
    ) -> None:
        await service.create(actor, ToolCreate(source_code=GREET))
        other_org = await make_org(session)
        other = await service.create(Actor(ids.DEFAULT_USER_ID, other_org), ToolCreate(source_code=GREET))
        assert other.name == "greet"

    async def test_args_json_schema_becomes_parameters(self, service: ToolService, actor: Actor) -> None:
        """Letta rebuilds each property from its type (enum, default and title dropped, description "" when
        missing) and takes the whole docstring as the description."""
        args = {
            "type": "object",
            "properties": {
                "n": {"type": "integer", "default": 1, "title": "N"},
                "mode": {"type": "string", "enum": ["a", "b"], "description": "How."},
                "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
            },
            "required": ["mode"],
        }
        tool = await service.create(actor, ToolCreate(source_code=GREET, args_json_schema=args))
        assert tool.json_schema == {
            "name": "greet",
            "description": "Greet someone.\n\nArgs:\n    name: Who to greet.\n    excited: Whether to shout.",
            "parameters": {
                "type": "object",
                "properties": {
                    "n": {"type": "integer", "description": ""},
                    "mode": {"type": "string", "description": "How."},
                    "tags": {"type": "array", "items": {"type": "string"}, "description": ""},
                },
                "required": ["mode"],
            },
        }
        assert tool.args_json_schema == args  # stored as sent

    async def test_args_json_schema_models_are_inlined(self, service: ToolService, actor: Actor) -> None:
        step = {"type": "object", "properties": {"title": {"type": "string"}, "n": {"type": "integer"}}}
        args = {
            "$defs": {"Step": {**step, "required": ["title"]}},
            "properties": {"steps": {"type": "array", "items": {"$ref": "#/$defs/Step"}, "description": "All."}},
            "required": ["steps"],
        }
        source = "def plan(steps):\n    return len(steps)\n"
        tool = await service.create(actor, ToolCreate(source_code=source, args_json_schema=args))
        item = {
            "type": "object",
            "properties": {"title": {"type": "string", "description": ""}, "n": {"type": "integer", "description": ""}},
            "required": ["title"],
        }
        assert tool.json_schema == {
            "name": "plan",
            "description": "The plan tool",
            "parameters": {
                "type": "object",
                "properties": {"steps": {"type": "array", "items": item, "description": "All."}},
                "required": ["steps"],
            },
        }

    async def test_args_json_schema_letta_cannot_render_is_400(self, service: ToolService, actor: Actor) -> None:
        args = {"properties": {"x": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}
        with pytest.raises(BadRequestError, match="General Union types are not yet supported"):
            await service.create(actor, ToolCreate(source_code=GREET, args_json_schema=args))

    async def test_schema_without_name_is_400(self, service: ToolService, actor: Actor) -> None:
        with pytest.raises(BadRequestError, match="name"):
            await service.create(actor, ToolCreate(source_code=GREET, json_schema={"parameters": {}}))


class TestUpsert:
    async def test_keeps_id_and_replaces_schema(self, service: ToolService, actor: Actor) -> None:
        first = await service.upsert(actor, ToolCreate(source_code=GREET, tags=["a"]))
        second = await service.upsert(actor, ToolCreate(source_code=GREET_V2))
        assert second.id == first.id
        assert second.source_code == GREET_V2
        assert list(second.json_schema["parameters"]["properties"]) == ["name", "times"]  # type: ignore[index]
        assert second.tags == ["a"]  # empty tags do not clear the old ones (as Letta)
        assert second.metadata_["tool_hash"] != first.metadata_["tool_hash"]  # type: ignore[index]


class TestUpdate:
    async def test_new_source_rederives_schema_and_description(self, service: ToolService, actor: Actor) -> None:
        tool = await service.create(actor, ToolCreate(source_code=GREET))
        updated = await service.update(actor, tool.id, ToolUpdate(source_code=GREET_V2))
        assert updated.description == "Greet someone several times."
        assert "times" in updated.json_schema["parameters"]["properties"]  # type: ignore[index]

    async def test_args_json_schema_keeps_the_tools_name(self, service: ToolService, actor: Actor) -> None:
        """Letta names the rebuilt schema after the tool, not after the function in the source."""
        tool = await service.create(actor, ToolCreate(source_code=GREET))
        args = {"properties": {"who": {"type": "string", "default": "x"}}}
        renamed = GREET.replace("def greet", "def greet_v2")
        updated = await service.update(actor, tool.id, ToolUpdate(source_code=renamed, args_json_schema=args))
        assert updated.name == "greet" and updated.json_schema["name"] == "greet"  # type: ignore[index]
        assert updated.json_schema["parameters"] == {  # type: ignore[index]
            "type": "object",
            "properties": {"who": {"type": "string", "description": ""}},
            "required": [],
        }

    async def test_only_sent_fields_change(self, service: ToolService, actor: Actor) -> None:
        tool = await service.create(actor, ToolCreate(source_code=GREET, enable_parallel_execution=True))
        updated = await service.update(actor, tool.id, ToolUpdate.model_validate({"return_char_limit": 300}))
        assert updated.return_char_limit == 300
        assert updated.enable_parallel_execution is True
        assert updated.json_schema == tool.json_schema

    async def test_rename_onto_taken_name_is_400(self, service: ToolService, actor: Actor) -> None:
        await service.create(actor, ToolCreate(source_code=GREET))
        other = await service.create(actor, ToolCreate(source_code=GREET.replace("def greet", "def wave")))
        schema = {**(other.json_schema or {}), "name": "greet"}
        with pytest.raises(BadRequestError) as info:
            await service.update(actor, other.id, ToolUpdate(json_schema=schema))
        assert info.value.body() == {
            "detail": "INVALID_ARGUMENT: Tool with name 'greet' already exists in your organization"
        }

    async def test_unknown_tool_404(self, service: ToolService, actor: Actor) -> None:
        with pytest.raises(NotFoundError):
            await service.update(actor, ids.new_id(ids.Prefix.TOOL), ToolUpdate(tags=["x"]))


class TestDelete:
    async def test_delete_detaches_from_agents(self, service: ToolService, actor: Actor, session: AsyncSession) -> None:
        tool = await service.create(actor, ToolCreate(source_code=GREET))
        agent = await make_agent(session, actor)
        await AgentToolService(session).attach(actor, agent.id, tool.id)
        await service.delete(actor, tool.id)
        links = await session.scalar(select(func.count()).where(orm.ToolAgent.agent_id == agent.id))
        assert links == 0
        with pytest.raises(NotFoundError):
            await service.get(actor, tool.id)
        with pytest.raises(NotFoundError):
            await service.delete(actor, tool.id)


class TestBaseTools:
    async def test_upsert_is_idempotent(self, service: ToolService, actor: Actor) -> None:
        first = await service.add_base_tools(actor)
        second = await service.add_base_tools(actor)
        assert {t.name for t in first} == set(BASE_TOOLS)
        assert {t.id for t in first} == {t.id for t in second}
        assert await service.count(actor, ToolFilters()) == len(BASE_TOOLS)
        assert await service.count(actor, ToolFilters(exclude_names=list(BASE_TOOLS))) == 0


class TestListing:
    async def test_filters_and_pages(self, service: ToolService, actor: Actor) -> None:
        names = ["alpha", "beta", "gamma"]
        for name in names:
            await service.create(actor, ToolCreate(source_code=GREET.replace("def greet", f"def {name}")))
        page = await service.list_tools(actor, ToolFilters(), Page(limit=2, order="asc"))
        assert [t.name for t in page] == ["alpha", "beta"]
        rest = await service.list_tools(actor, ToolFilters(), Page(after=page[-1].id, limit=2, order="asc"))
        assert [t.name for t in rest] == ["gamma"]
        found = await service.list_tools(actor, ToolFilters(search="AMM"), Page())
        assert [t.name for t in found] == ["gamma"]
        assert await service.count(actor, ToolFilters(search="_")) == 0  # LIKE wildcards are literal


class TestAgentTools:
    async def test_attach_adds_approval_rule_for_gated_tool(
        self, service: ToolService, actor: Actor, session: AsyncSession
    ) -> None:
        tool = await service.create(actor, ToolCreate(source_code=GREET, default_requires_approval=True))
        agent = await make_agent(session, actor)
        agents = AgentToolService(session)
        await agents.attach(actor, agent.id, tool.id)
        await agents.attach(actor, agent.id, tool.id)
        assert agent.tool_rules == [{"tool_name": "greet", "type": "requires_approval", "prompt_template": None}]
        assert [t.id for t in await agents.list_tools(actor, agent.id, Page())] == [tool.id]

    async def test_approval_toggles_rule(self, actor: Actor, session: AsyncSession) -> None:
        keep = {"tool_name": "x", "type": "exit_loop", "prompt_template": None}
        agent = await make_agent(session, actor, [keep])
        agents = AgentToolService(session)
        await agents.set_approval(actor, agent.id, "greet", True)
        assert [r["type"] for r in agent.tool_rules] == ["exit_loop", "requires_approval"]
        await agents.set_approval(actor, agent.id, "greet", False)
        assert agent.tool_rules == [keep]

    async def test_unknown_agent_or_tool_404(self, actor: Actor, session: AsyncSession) -> None:
        agents = AgentToolService(session)
        with pytest.raises(NotFoundError, match="Agent"):
            await agents.attach(actor, ids.new_id(ids.Prefix.AGENT), ids.new_id(ids.Prefix.TOOL))
        agent = await make_agent(session, actor)
        with pytest.raises(NotFoundError, match="Tool"):
            await agents.attach(actor, agent.id, ids.new_id(ids.Prefix.TOOL))


class TestPureHelpers:
    def test_with_approval_returns_none_when_unchanged(self) -> None:
        rule = {"tool_name": "a", "type": "requires_approval", "prompt_template": None}
        assert with_approval([rule], "a", True) is None
        assert with_approval([], "a", False) is None
