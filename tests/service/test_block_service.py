"""BlockService against real Postgres: limits, shared blocks, labels, prompt recompilation, filters."""

from collections.abc import Sequence

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.agents.system_message import rebuild_prompts
from memlet.blocks.repository import BlockFilters
from memlet.blocks.schemas import BlockUpdate, CreateBlock
from memlet.blocks.service import BlockService, ensure_unique_labels
from memlet.db import models as orm
from memlet.db.pagination import Page
from memlet.errors import ConflictError, LimitExceededError, NotFoundError


@pytest.fixture
async def actor(session: AsyncSession) -> Actor:
    """A fresh organization per test, so listings only see this test's rows."""
    org_id = ids.new_id(ids.Prefix.ORGANIZATION)
    session.add(orm.Organization(id=org_id, name="blocks-test"))
    await session.flush()
    return Actor(ids.DEFAULT_USER_ID, org_id)


@pytest.fixture
def service(session: AsyncSession) -> BlockService:
    return BlockService(session, rebuild_prompts)


async def make_agent(session: AsyncSession, actor: Actor, name: str = "a") -> orm.Agent:
    """An agent row with an (empty) system message, as the agents service stores one."""
    agent = orm.Agent(
        id=ids.new_id(ids.Prefix.AGENT),
        organization_id=actor.organization_id,
        name=name,
        system="You are a test agent.",
        llm_config={"model": "gpt-4o-mini", "model_endpoint_type": "openai", "context_window": 128000},
        tool_rules=[],
        message_ids=[],
    )
    session.add(agent)
    await session.flush()
    message = orm.Message(
        id=ids.new_id(ids.Prefix.MESSAGE), organization_id=actor.organization_id, agent_id=agent.id, role="system"
    )
    session.add(message)
    await session.flush()
    agent.message_ids = [message.id]
    await session.flush()
    return agent


async def system_text(session: AsyncSession, agent: orm.Agent) -> str:
    content = await session.scalar(select(orm.Message.content).where(orm.Message.id == agent.message_ids[0]))
    return "".join(part.get("text", "") for part in content or [])


async def block_count(session: AsyncSession, actor: Actor) -> int:
    stmt = select(func.count()).select_from(orm.Block).where(orm.Block.organization_id == actor.organization_id)
    return int(await session.scalar(stmt) or 0)


class TestCreate:
    async def test_stores_and_returns_wire_block(self, service: BlockService, actor: Actor) -> None:
        block = await service.create(actor, CreateBlock(label="human", value="Bob", tags=["a", "a", "b"]))
        assert block.id.startswith("block-") and block.limit == 100_000
        assert block.tags == ["a", "b"] and block.metadata == {} and block.description is None
        assert (await service.get(actor, block.id)).value == "Bob"

    async def test_over_limit_writes_nothing(self, service: BlockService, actor: Actor, session: AsyncSession) -> None:
        with pytest.raises(LimitExceededError) as err:
            await service.create(actor, CreateBlock(label="human", value="x" * 11, limit=10))
        assert "10" in err.value.message and "11" in err.value.message and "human" in err.value.message
        assert await block_count(session, actor) == 0

    async def test_unknown_id_404_letta_text(self, service: BlockService, actor: Actor) -> None:
        missing = ids.new_id(ids.Prefix.BLOCK)
        with pytest.raises(NotFoundError) as err:
            await service.get(actor, missing)
        assert err.value.message == f"Block with id '{missing}' not found"

    async def test_other_org_cannot_see_block(self, service: BlockService, actor: Actor) -> None:
        block = await service.create(actor, CreateBlock(label="human", value="Bob"))
        with pytest.raises(NotFoundError):
            await service.get(Actor(ids.DEFAULT_USER_ID, ids.DEFAULT_ORG_ID), block.id)


class TestModify:
    async def test_partial_update_keeps_unsent_and_null_fields(self, service: BlockService, actor: Actor) -> None:
        block = await service.create(actor, CreateBlock(label="human", value="Bob", description="d", read_only=True))
        updated = await service.modify(
            actor, block.id, BlockUpdate.model_validate({"value": "Ann", "description": None})
        )
        assert (updated.value, updated.description, updated.read_only) == ("Ann", "d", True)

    async def test_value_over_limit_400_nothing_written(self, service: BlockService, actor: Actor) -> None:
        block = await service.create(actor, CreateBlock(label="human", value="Bob", limit=5))
        with pytest.raises(LimitExceededError):
            await service.modify(actor, block.id, BlockUpdate(value="123456"))
        assert (await service.get(actor, block.id)).value == "Bob"

    async def test_lowering_limit_below_value_rejected(self, service: BlockService, actor: Actor) -> None:
        block = await service.create(actor, CreateBlock(label="human", value="abcdef"))
        with pytest.raises(LimitExceededError) as err:
            await service.modify(actor, block.id, BlockUpdate(limit=3))
        assert (err.value.limit, err.value.size) == (3, 6)
        assert (await service.get(actor, block.id)).limit == 100_000

    async def test_shared_block_edit_seen_by_every_agent_prompt(
        self, service: BlockService, actor: Actor, session: AsyncSession
    ) -> None:
        block = await service.create(actor, CreateBlock(label="team", value="old news"))
        first, second = await make_agent(session, actor, "a"), await make_agent(session, actor, "b")
        for agent in (first, second):
            await service.attach(actor, agent.id, block.id)
        await service.modify_by_label(actor, first.id, "team", BlockUpdate(value="fresh news"))
        for agent in (first, second):
            assert (await service.get_by_label(actor, agent.id, "team")).value == "fresh news"
            text = await system_text(session, agent)
            assert "fresh news" in text and "old news" not in text

    async def test_agents_recompiled_with_statements_that_do_not_grow_with_the_agents(
        self, service: BlockService, actor: Actor, session: AsyncSession
    ) -> None:
        """The agents of a block are read in one query, what their prompts show in one, and their system messages
        written in one: an edit seen by three agents sends as many statements as one seen by one agent."""
        block = await service.create(actor, CreateBlock(label="team", value="v1"))
        agents = [await make_agent(session, actor, str(i)) for i in range(3)]
        engine = session.bind.engine  # type: ignore[union-attr]

        async def statements_of_an_edit(value: str) -> list[str]:
            statements: list[str] = []

            def record(*args: object) -> None:
                statements.append(str(args[2]))

            event.listen(engine.sync_engine, "before_cursor_execute", record)
            try:
                await service.modify(actor, block.id, BlockUpdate(value=value))
            finally:
                event.remove(engine.sync_engine, "before_cursor_execute", record)
            return statements

        await service.attach(actor, agents[0].id, block.id)
        one = await statements_of_an_edit("v2")
        for agent in agents[1:]:
            await service.attach(actor, agent.id, block.id)
        three = await statements_of_an_edit("v3")
        assert len(three) == len(one)
        assert len([s for s in three if s.lstrip().startswith("SELECT agents.id, agents.name")]) == 1
        for agent in agents:
            assert "v3" in await system_text(session, agent)

    async def test_relabel_follows_attachments(
        self, service: BlockService, actor: Actor, session: AsyncSession
    ) -> None:
        block = await service.create(actor, CreateBlock(label="old", value="v"))
        agent = await make_agent(session, actor)
        await service.attach(actor, agent.id, block.id)
        await service.modify(actor, block.id, BlockUpdate(label="new"))
        assert (await service.get_by_label(actor, agent.id, "new")).id == block.id
        with pytest.raises(NotFoundError):
            await service.get_by_label(actor, agent.id, "old")
        assert "<new>" in await system_text(session, agent)

    async def test_relabel_onto_taken_label_409_names_it(
        self, service: BlockService, actor: Actor, session: AsyncSession
    ) -> None:
        agent = await make_agent(session, actor)
        a = await service.create(actor, CreateBlock(label="human", value="1"))
        b = await service.create(actor, CreateBlock(label="persona", value="2"))
        for block in (a, b):
            await service.attach(actor, agent.id, block.id)
        with pytest.raises(ConflictError, match="'human'"):
            await service.modify(actor, b.id, BlockUpdate(label="human"))
        assert (await service.get(actor, b.id)).label == "persona"

    async def test_unknown_label_404(self, service: BlockService, actor: Actor, session: AsyncSession) -> None:
        agent = await make_agent(session, actor)
        with pytest.raises(NotFoundError, match=f"No block with label 'nope' found for agent '{agent.id}'"):
            await service.modify_by_label(actor, agent.id, "nope", BlockUpdate(value="x"))


class TestAttachDetach:
    async def test_attach_recompiles_and_is_idempotent(
        self, service: BlockService, actor: Actor, session: AsyncSession
    ) -> None:
        agent = await make_agent(session, actor)
        block = await service.create(actor, CreateBlock(label="notes", value="remember milk"))
        await service.attach(actor, agent.id, block.id)
        await service.attach(actor, agent.id, block.id)
        assert [b.id for b in (await service.memory(actor, agent.id)).blocks] == [block.id]
        assert "remember milk" in await system_text(session, agent)

    async def test_attach_duplicate_label_409(self, service: BlockService, actor: Actor, session: AsyncSession) -> None:
        agent = await make_agent(session, actor)
        await service.attach(actor, agent.id, (await service.create(actor, CreateBlock(label="h", value="1"))).id)
        other = await service.create(actor, CreateBlock(label="h", value="2"))
        with pytest.raises(ConflictError, match="'h'"):
            await service.attach(actor, agent.id, other.id)

    async def test_unknown_agent_404(self, service: BlockService, actor: Actor) -> None:
        block = await service.create(actor, CreateBlock(label="h", value="1"))
        missing = ids.new_id(ids.Prefix.AGENT)
        with pytest.raises(NotFoundError, match=f"Agent with ID {missing} not found"):
            await service.attach(actor, missing, block.id)

    async def test_detach_removes_from_prompt_keeps_block(
        self, service: BlockService, actor: Actor, session: AsyncSession
    ) -> None:
        agent = await make_agent(session, actor)
        block = await service.create(actor, CreateBlock(label="notes", value="remember milk"))
        await service.attach(actor, agent.id, block.id)
        await service.detach(actor, agent.id, block.id)
        assert "remember milk" not in await system_text(session, agent)
        assert (await service.get(actor, block.id)).value == "remember milk"
        with pytest.raises(NotFoundError, match="No block with id"):
            await service.detach(actor, agent.id, block.id)


class TestDelete:
    async def test_delete_detaches_everywhere(self, service: BlockService, actor: Actor, session: AsyncSession) -> None:
        agent = await make_agent(session, actor)
        block = await service.create(actor, CreateBlock(label="notes", value="remember milk"))
        await service.attach(actor, agent.id, block.id)
        await service.delete(actor, block.id)
        assert (await service.memory(actor, agent.id)).blocks == []
        assert "remember milk" not in await system_text(session, agent)
        with pytest.raises(NotFoundError):
            await service.delete(actor, block.id)


class TestSearch:
    async def labels(self, service: BlockService, actor: Actor, **filters: object) -> list[str]:
        page = Page(limit=None, order="asc")
        return [b.label or "" for b in await service.search(actor, BlockFilters(**filters), page)]  # type: ignore[arg-type]

    async def seed(self, service: BlockService, actor: Actor) -> Sequence[str]:
        specs = [
            CreateBlock(label="alpha", value="100% sure", tags=["x"], description="first one"),
            CreateBlock(label="beta", value="1000 sure", tags=["x", "y"]),
            CreateBlock(label="gamma", value="tmpl", is_template=True, template_name="base"),
            CreateBlock(label="delta", value="secret", hidden=True),
        ]
        return [(await service.create(actor, s)).id for s in specs]

    async def test_filters(self, service: BlockService, actor: Actor, session: AsyncSession) -> None:
        _, beta, *_ = await self.seed(service, actor)
        agent = await make_agent(session, actor)
        await service.attach(actor, agent.id, beta)
        assert await self.labels(service, actor) == ["alpha", "beta"]
        assert await self.labels(service, actor, label="beta") == ["beta"]
        assert await self.labels(service, actor, templates_only=True) == ["gamma"]
        assert await self.labels(service, actor, templates_only=True, template_name="base") == ["gamma"]
        assert await self.labels(service, actor, show_hidden=True) == ["alpha", "beta", "delta"]
        assert await self.labels(service, actor, value_search="0%") == ["alpha"]  # % is literal, not a wildcard
        assert await self.labels(service, actor, label_search="ET") == ["beta"]
        assert await self.labels(service, actor, description_search="first") == ["alpha"]
        assert await self.labels(service, actor, tags=["y"]) == ["beta"]
        assert await self.labels(service, actor, tags=["x", "y"]) == ["alpha", "beta"]
        assert await self.labels(service, actor, tags=["x", "y"], match_all_tags=True) == ["beta"]
        assert await self.labels(service, actor, agents_count_gt=0) == ["beta"]
        assert await self.labels(service, actor, agents_count_lt=1) == ["alpha"]
        assert await self.labels(service, actor, agents_count_eq=[0, 1]) == ["alpha", "beta"]
        assert await service.count(actor, BlockFilters(tags=["x"])) == 2

    async def test_identity_filters(self, service: BlockService, actor: Actor, session: AsyncSession) -> None:
        alpha, *_ = await self.seed(service, actor)
        identity = orm.Identity(
            id=ids.new_id(ids.Prefix.IDENTITY),
            organization_id=actor.organization_id,
            identifier_key="user-42",
            name="Ann",
            identity_type="user",
        )
        session.add(identity)
        await session.flush()
        session.add(orm.IdentityBlock(identity_id=identity.id, block_id=alpha))
        await session.flush()
        assert await self.labels(service, actor, identity_id=identity.id) == ["alpha"]
        assert await self.labels(service, actor, identifier_keys=["user-42"]) == ["alpha"]
        assert await self.labels(service, actor, identifier_keys=["nobody"]) == []


def test_duplicate_labels_rejected_by_name() -> None:
    ensure_unique_labels(["a", "b"])
    with pytest.raises(ConflictError, match="'b'"):
        ensure_unique_labels(["a", "b", "b"])
