"""AgentService against real Postgres: create rules, 404s, partial updates, the system message, listing, delete."""

import asyncio
from typing import Any

import pytest
from sqlalchemy import delete, event, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine

from memlet import ids
from memlet.actor import Actor
from memlet.agents.list_filters import AgentFilters
from memlet.agents.schemas import CreateAgent, UpdateAgent
from memlet.agents.service import AgentService
from memlet.agents.system_message import rebuild_prompts
from memlet.agents.views import ALL_RELATIONSHIPS, DEFAULT_RELATIONSHIPS
from memlet.blocks.schemas import CreateBlock
from memlet.blocks.service import BlockService
from memlet.config import Settings
from memlet.db import models as orm
from memlet.db.engine import async_url
from memlet.db.pagination import Page
from memlet.errors import BadRequestError, ConflictError, NotFoundError
from memlet.providers.catalog import ModelCatalog
from memlet.tools.service import ToolService

LLM = {"model": "gpt-4o-mini", "model_endpoint_type": "openai", "context_window": 128000}


@pytest.fixture
async def actor(session: AsyncSession) -> Actor:
    """A fresh organization per test, so listings only see this test's rows."""
    org_id = ids.new_id(ids.Prefix.ORGANIZATION)
    session.add(orm.Organization(id=org_id, name="agents-test"))
    await session.flush()
    return Actor(ids.DEFAULT_USER_ID, org_id)


@pytest.fixture
def service(session: AsyncSession) -> AgentService:
    return AgentService(session, ModelCatalog(Settings(_env_file=None)))  # type: ignore[call-arg]


def request(**fields: Any) -> CreateAgent:
    """An agent request with an explicit llm_config (no model catalog lookup) and no base tools."""
    return CreateAgent.model_validate({"llm_config": LLM, "include_base_tools": False, **fields})


async def system_text(session: AsyncSession, message_id: str) -> str:
    content = await session.scalar(select(orm.Message.content).where(orm.Message.id == message_id))
    return "".join(part.get("text", "") for part in content or [])


async def agent_rows(session: AsyncSession, actor: Actor) -> int:
    stmt = select(func.count()).select_from(orm.Agent).where(orm.Agent.organization_id == actor.organization_id)
    return int(await session.scalar(stmt) or 0)


class TestCreate:
    async def test_blocks_tags_and_compiled_system_message(
        self, service: AgentService, actor: Actor, session: AsyncSession
    ) -> None:
        state = await service.create(
            actor,
            request(
                name="Ann's helper",
                system="You are a careful helper.",
                memory_blocks=[{"label": "human", "value": "Name: Bob"}, {"label": "persona", "value": "Calm"}],
                tags=["b", "a", "b"],
            ),
        )
        assert state.id.startswith("agent-") and state.name == "Ann's helper"
        assert sorted(b.label or "" for b in state.blocks) == ["human", "persona"]
        assert state.tags == ["a", "b"]
        human = next(b for b in state.blocks if b.label == "human")
        assert human.description and human.description.startswith("The human block")
        # Stored, not only returned: a fresh read sees the same agent.
        again = await service.get_state(actor, state.id)
        assert again.tags == ["a", "b"] and {b.value for b in again.blocks} == {"Name: Bob", "Calm"}
        assert again.message_ids == state.message_ids and state.message_ids
        text = await system_text(session, state.message_ids[0])
        assert "You are a careful helper." in text and "Name: Bob" in text and "<persona>" in text

    async def test_without_model_or_llm_config_is_400_and_writes_nothing(
        self, service: AgentService, actor: Actor, session: AsyncSession
    ) -> None:
        with pytest.raises(BadRequestError, match="Must specify either model or llm_config"):
            await service.create(actor, CreateAgent(name="x", include_base_tools=False))
        assert await agent_rows(session, actor) == 0

    async def test_unknown_tool_name_400_and_block_id_404(self, service: AgentService, actor: Actor) -> None:
        with pytest.raises(BadRequestError, match=r"^Tools not found by name: \{'nope'\}$"):
            await service.create(actor, request(tools=["nope"]))
        missing = ids.new_id(ids.Prefix.BLOCK)
        with pytest.raises(NotFoundError, match=f"Block with id '{missing}' not found"):
            await service.create(actor, request(block_ids=[missing]))

    async def test_duplicate_block_label_409(self, service: AgentService, actor: Actor, session: AsyncSession) -> None:
        shared = await BlockService(session, rebuild_prompts).create(actor, CreateBlock(label="human", value="shared"))
        with pytest.raises(ConflictError, match="'human'"):
            await service.create(
                actor, request(memory_blocks=[{"label": "human", "value": "own"}], block_ids=[shared.id])
            )

    async def test_base_tools_attached_when_asked(
        self, service: AgentService, actor: Actor, session: AsyncSession
    ) -> None:
        await ToolService(session).add_base_tools(actor)
        with_tools = await service.create(actor, request(include_base_tools=True))
        without = await service.create(actor, request())
        assert {t.name for t in with_tools.tools} == {"conversation_search", "memory_insert", "memory_replace"}
        assert without.tools == []
        assert {t.name for t in (await service.get_state(actor, with_tools.id)).tools} == {
            "conversation_search",
            "memory_insert",
            "memory_replace",
        }

    async def test_response_equals_a_fresh_read_of_what_was_stored(
        self, service: AgentService, actor: Actor, session: AsyncSession
    ) -> None:
        """The create response is built from the rows it wrote, without reading them back (one statement of CTEs
        writes the agent, its blocks and links): every field must match what a fresh read of the stored rows gives."""
        await ToolService(session).add_base_tools(actor)
        shared = await BlockService(session, rebuild_prompts).create(actor, CreateBlock(label="shared", value="s"))
        identity = orm.Identity(
            id=ids.new_id(ids.Prefix.IDENTITY),
            identifier_key="k",
            name="n",
            identity_type="user",
            organization_id=actor.organization_id,
        )
        session.add(identity)
        await session.flush()
        state = await service.create(
            actor,
            request(
                include_base_tools=True,
                memory_blocks=[
                    {"label": "human", "value": "Bob", "metadata": {"m": 1}},
                    {"label": "notes", "value": ""},
                ],
                block_ids=[shared.id],
                identity_ids=[identity.id, identity.id],
                tags=["z", "a"],
                metadata={"k": [1]},
                secrets={"KEY": "v"},
                response_format={"type": "json_object"},
                timezone="Europe/Paris",
            ),
        )
        session.expunge_all()
        again = await service.get_state(actor, state.id, ALL_RELATIONSHIPS)
        assert again.model_dump() == state.model_dump()
        assert [b.label for b in again.blocks] == ["human", "notes", "shared"] and again.identity_ids == [identity.id]


class TestRead:
    async def test_unknown_and_other_org_agent_404(self, service: AgentService, actor: Actor) -> None:
        missing = ids.new_id(ids.Prefix.AGENT)
        with pytest.raises(NotFoundError, match=f"Agent with ID {missing} not found"):
            await service.get_state(actor, missing)
        state = await service.create(actor, request())
        stranger = Actor(ids.DEFAULT_USER_ID, ids.DEFAULT_ORG_ID)
        with pytest.raises(NotFoundError):
            await service.get_state(stranger, state.id)
        with pytest.raises(NotFoundError):
            await service.update(stranger, state.id, UpdateAgent(name="stolen"))
        with pytest.raises(NotFoundError):
            await service.delete(stranger, state.id)
        assert (await service.get_state(actor, state.id)).name == state.name


class TestUpdate:
    async def test_only_sent_fields_change(self, service: AgentService, actor: Actor) -> None:
        state = await service.create(actor, request(name="before", description="keep me", tags=["x"]))
        updated = await service.update(actor, state.id, UpdateAgent.model_validate({"name": "after", "tags": ["y"]}))
        assert (updated.name, updated.description, updated.tags) == ("after", "keep me", ["y"])
        assert (await service.get_state(actor, state.id)).tags == ["y"]

    async def test_new_system_rewrites_the_same_message(
        self, service: AgentService, actor: Actor, session: AsyncSession
    ) -> None:
        state = await service.create(actor, request(system="Old instructions."))
        assert state.message_ids
        updated = await service.update(actor, state.id, UpdateAgent(system="New instructions."))
        assert updated.message_ids == state.message_ids
        text = await system_text(session, state.message_ids[0])
        assert "New instructions." in text and "Old instructions." not in text

    async def test_block_ids_replace_attachments_and_prompt(
        self, service: AgentService, actor: Actor, session: AsyncSession
    ) -> None:
        blocks = BlockService(session, rebuild_prompts)
        old = await blocks.create(actor, CreateBlock(label="old", value="stale fact"))
        new = await blocks.create(actor, CreateBlock(label="new", value="fresh fact"))
        state = await service.create(actor, request(block_ids=[old.id]))
        updated = await service.update(actor, state.id, UpdateAgent(block_ids=[new.id]))
        assert [b.id for b in updated.blocks] == [new.id]
        assert state.message_ids
        text = await system_text(session, state.message_ids[0])
        assert "fresh fact" in text and "stale fact" not in text
        assert (await blocks.get(actor, old.id)).value == "stale fact"  # detached, not deleted

    async def test_message_ids_of_another_agent_400(self, service: AgentService, actor: Actor) -> None:
        mine = await service.create(actor, request(name="mine"))
        other = await service.create(actor, request(name="other"))
        assert mine.message_ids and other.message_ids
        with pytest.raises(BadRequestError, match=other.message_ids[0]):
            await service.update(actor, mine.id, UpdateAgent(message_ids=[mine.message_ids[0], other.message_ids[0]]))
        assert (await service.get_state(actor, mine.id)).message_ids == mine.message_ids


class TestListAndDelete:
    async def test_pages_in_creation_order_with_cursors_and_filters(self, service: AgentService, actor: Actor) -> None:
        made = [await service.create(actor, request(name=n, tags=[t])) for n, t in [("a", "x"), ("b", "y"), ("c", "x")]]

        async def names(filters: AgentFilters, page: Page) -> list[str]:
            rows = await service.list_page(actor, filters, page, sort_by="created_at", include=frozenset())
            return [r.name for r in rows]

        assert await names(AgentFilters(), Page(limit=2, order="asc")) == ["a", "b"]
        assert await names(AgentFilters(), Page(after=made[1].id, limit=2, order="asc")) == ["c"]
        assert await names(AgentFilters(), Page(limit=None, order="desc")) == ["c", "b", "a"]
        # Cursors are relative to the listing order: in a newest-first listing "after" means older.
        assert await names(AgentFilters(), Page(after=made[2].id, limit=None, order="desc")) == ["b", "a"]
        assert await names(AgentFilters(), Page(before=made[0].id, limit=1, order="desc")) == ["b"]
        assert await names(AgentFilters(tags=["x"]), Page(order="asc")) == ["a", "c"]
        assert await names(AgentFilters(query_text="%"), Page(order="asc")) == []  # LIKE wildcards are literal
        assert await service.count(actor, AgentFilters(tags=["x"])) == 2

    async def test_listing_reads_a_page_in_three_statements_whatever_its_size(
        self, service: AgentService, actor: Actor, session: AsyncSession
    ) -> None:
        """The rows with their links (tags, identity and folder ids, manager flag), blocks and tools: one statement
        each, never one per agent; identity, folder and group rows are read only when some agent of the page has
        any."""
        await ToolService(session).add_base_tools(actor)
        blocks = [{"label": "human", "value": "Bob"}, {"label": "persona", "value": "Sam"}]

        async def statements_for_page(size: int) -> list[str]:
            for i in range(await agent_rows(session, actor), size):
                await service.create(actor, request(memory_blocks=blocks, include_base_tools=True, tags=[f"t{i}"]))
            seen: list[str] = []
            engine = session.bind.engine  # type: ignore[union-attr]

            def record(*args: object) -> None:
                seen.append(str(args[2]))

            event.listen(engine.sync_engine, "before_cursor_execute", record)
            try:
                states = await service.list_page(
                    actor, AgentFilters(), Page(limit=size), sort_by="created_at", include=DEFAULT_RELATIONSHIPS
                )
            finally:
                event.remove(engine.sync_engine, "before_cursor_execute", record)
            assert len(states) == size and all(len(s.blocks) == 2 and len(s.tools) == 3 for s in states)
            assert sorted(t for s in states for t in s.tags) == sorted(f"t{i}" for i in range(size))
            return seen

        assert len(await statements_for_page(2)) == 3
        assert len(await statements_for_page(6)) == 3

    async def test_delete_removes_agent_and_its_messages(
        self, service: AgentService, actor: Actor, session: AsyncSession
    ) -> None:
        state = await service.create(actor, request())
        await service.delete(actor, state.id)
        with pytest.raises(NotFoundError):
            await service.get_state(actor, state.id)
        left = await session.scalar(select(func.count()).where(orm.Message.agent_id == state.id))
        assert left == 0
        with pytest.raises(NotFoundError):
            await service.delete(actor, state.id)


async def test_delete_waits_for_a_prompt_rebuild_instead_of_deadlocking(pg_uri: str) -> None:
    """Rebuilding an agent's prompt (a file processed for its folder) locks the agent row, then writes its system
    message. Delete used to delete the messages first and the agent row second: the two deadlocked (503).
    Delete now locks the agent row first."""
    engine = create_async_engine(async_url(pg_uri))
    makers = async_sessionmaker(engine, expire_on_commit=False)
    org_id = ids.new_id(ids.Prefix.ORGANIZATION)
    actor = Actor(ids.DEFAULT_USER_ID, org_id)
    catalog = ModelCatalog(Settings(_env_file=None))  # type: ignore[call-arg]
    try:
        async with makers() as setup, setup.begin():
            setup.add(orm.Organization(id=org_id, name="delete-deadlock"))
            await setup.flush()
            agent = await AgentService(setup, catalog).create(actor, request(name="doomed"))
        async with makers() as rebuild, makers() as deleting:
            await rebuild.begin()
            await rebuild.get(orm.Agent, agent.id, with_for_update=True)

            async def delete_it() -> None:
                async with deleting.begin():
                    await AgentService(deleting, catalog).delete(actor, agent.id)

            task = asyncio.create_task(delete_it())
            await asyncio.sleep(0.3)  # the delete is now waiting on a lock
            system_id = agent.message_ids[0]
            await rebuild.execute(update(orm.Message).where(orm.Message.id == system_id).values(name="rebuilt"))
            await rebuild.commit()
            await asyncio.wait_for(task, 10)
        async with makers() as check:
            assert await check.get(orm.Agent, agent.id) is None
    finally:
        async with makers() as cleanup, cleanup.begin():
            await cleanup.execute(delete(orm.Organization).where(orm.Organization.id == org_id))
        await engine.dispose()
