"""IdentityService against real Postgres: unique keys, PATCH merges, PUT replaces, links, 404s, listing."""

from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.agents.system_message import rebuild_prompts
from memlet.blocks.schemas import CreateBlock
from memlet.blocks.service import BlockService
from memlet.db import models as orm
from memlet.db.pagination import Page
from memlet.errors import BadRequestError, ConflictError, NotFoundError
from memlet.identities.repository import IdentityFilters
from memlet.identities.schemas import IdentityCreate, IdentityProperty, IdentityUpdate, IdentityUpsert
from memlet.identities.service import IdentityService


@pytest.fixture
async def actor(session: AsyncSession) -> Actor:
    """A fresh organization per test, so keys never collide with other tests."""
    org_id = ids.new_id(ids.Prefix.ORGANIZATION)
    session.add(orm.Organization(id=org_id, name="identities-test"))
    await session.flush()
    return Actor(ids.DEFAULT_USER_ID, org_id)


@pytest.fixture
def service(session: AsyncSession) -> IdentityService:
    return IdentityService(session)


def create(key: str = "user-1", **fields: Any) -> IdentityCreate:
    return IdentityCreate.model_validate({"identifier_key": key, "name": "Ann", "identity_type": "user", **fields})


def prop(key: str, value: Any, kind: str = "string") -> IdentityProperty:
    return IdentityProperty.model_validate({"key": key, "value": value, "type": kind})


async def make_agent(session: AsyncSession, actor: Actor, name: str = "a") -> str:
    agent = orm.Agent(
        id=ids.new_id(ids.Prefix.AGENT),
        organization_id=actor.organization_id,
        name=name,
        system="test",
        llm_config={"model": "gpt-4o-mini", "model_endpoint_type": "openai", "context_window": 128000},
        tool_rules=[],
        message_ids=[],
    )
    session.add(agent)
    await session.flush()
    return agent.id


class TestCreate:
    async def test_stores_properties_and_links(
        self, service: IdentityService, actor: Actor, session: AsyncSession
    ) -> None:
        agent_id = await make_agent(session, actor)
        block = await BlockService(session, rebuild_prompts).create(actor, CreateBlock(label="human", value="Ann"))
        made = await service.create(
            actor, create(agent_ids=[agent_id], block_ids=[block.id], properties=[prop("age", 42, "number")])
        )
        got = await service.get(actor, made.id)
        assert got.id.startswith("identity-") and (got.identifier_key, got.name) == ("user-1", "Ann")
        assert got.agent_ids == [agent_id] and got.block_ids == [block.id]
        assert [(p.key, p.value, p.type) for p in got.properties] == [("age", 42, "number")]

    async def test_same_key_and_project_409_other_project_fine(self, service: IdentityService, actor: Actor) -> None:
        await service.create(actor, create())
        with pytest.raises(ConflictError, match="identifier_key='user-1' and project_id='None'"):
            await service.create(actor, create())
        other = await service.create(actor, create(project_id="proj-2"))
        assert other.project_id == "proj-2"
        assert await service.count(actor) == 2

    async def test_unknown_agent_or_block_404_names_it(self, service: IdentityService, actor: Actor) -> None:
        missing = ids.new_id(ids.Prefix.AGENT)
        with pytest.raises(NotFoundError, match=f"Agent with ID {missing} not found"):
            await service.create(actor, create(agent_ids=[missing]))
        missing_block = ids.new_id(ids.Prefix.BLOCK)
        with pytest.raises(NotFoundError, match=f"Block with id '{missing_block}' not found"):
            await service.create(actor, create("user-2", block_ids=[missing_block]))


class TestRead:
    async def test_unknown_and_other_org_404(self, service: IdentityService, actor: Actor) -> None:
        missing = ids.new_id(ids.Prefix.IDENTITY)
        with pytest.raises(NotFoundError, match=f"Identity with ID {missing} not found"):
            await service.get(actor, missing)
        made = await service.create(actor, create())
        stranger = Actor(ids.DEFAULT_USER_ID, ids.DEFAULT_ORG_ID)
        for call in (
            service.get(stranger, made.id),
            service.update(stranger, made.id, IdentityUpdate(name="stolen")),
            service.delete(stranger, made.id),
        ):
            with pytest.raises(NotFoundError):
                await call
        assert (await service.get(actor, made.id)).name == "Ann"


class TestUpdate:
    async def test_patch_merges_properties_and_adds_links(
        self, service: IdentityService, actor: Actor, session: AsyncSession
    ) -> None:
        first, second = await make_agent(session, actor, "a"), await make_agent(session, actor, "b")
        made = await service.create(actor, create(agent_ids=[first], properties=[prop("a", "1"), prop("b", "2")]))
        updated = await service.update(
            actor, made.id, IdentityUpdate(agent_ids=[second], properties=[prop("b", "changed"), prop("c", "3")])
        )
        assert updated.name == "Ann"  # not sent, kept
        assert sorted(updated.agent_ids) == sorted([first, second])
        assert {p.key: p.value for p in updated.properties} == {"a": "1", "b": "changed", "c": "3"}

    async def test_rekey_onto_taken_key_409(self, service: IdentityService, actor: Actor) -> None:
        await service.create(actor, create("taken"))
        made = await service.create(actor, create("mine"))
        with pytest.raises(ConflictError, match="identifier_key='taken'"):
            await service.update(actor, made.id, IdentityUpdate(identifier_key="taken"))
        assert (await service.get(actor, made.id)).identifier_key == "mine"

    async def test_put_upserts_by_key_and_replaces(
        self, service: IdentityService, actor: Actor, session: AsyncSession
    ) -> None:
        first, second = await make_agent(session, actor, "a"), await make_agent(session, actor, "b")
        made = await service.create(actor, create(agent_ids=[first], properties=[prop("a", "1")]))
        body = {"identifier_key": "user-1", "name": "Bo", "identity_type": "org", "agent_ids": [second]}
        replaced = await service.upsert(actor, IdentityUpsert.model_validate(body))
        assert replaced.id == made.id
        assert (replaced.name, replaced.identity_type, replaced.agent_ids) == ("Bo", "org", [second])
        assert [p.key for p in replaced.properties] == ["a"]  # properties not sent are kept
        fresh = await service.upsert(actor, IdentityUpsert.model_validate({**body, "identifier_key": "user-9"}))
        assert fresh.id != made.id and await service.count(actor) == 2

    async def test_replace_properties_drops_unsent_keys(self, service: IdentityService, actor: Actor) -> None:
        made = await service.create(actor, create(properties=[prop("a", "1"), prop("b", "2")]))
        await service.replace_properties(actor, made.id, [prop("c", True, "boolean")])
        assert [(p.key, p.value) for p in (await service.get(actor, made.id)).properties] == [("c", True)]


class TestLinksAndDelete:
    async def test_attach_detach_agent_and_block(
        self, service: IdentityService, actor: Actor, session: AsyncSession
    ) -> None:
        agent_id = await make_agent(session, actor)
        block = await BlockService(session, rebuild_prompts).create(actor, CreateBlock(label="human", value="Ann"))
        made = await service.create(actor, create())
        await service.attach_agent(actor, made.id, agent_id)
        await service.attach_agent(actor, made.id, agent_id)  # idempotent
        assert (await service.attach_block(actor, made.id, block.id)).id == block.id
        got = await service.get(actor, made.id)
        assert (got.agent_ids, got.block_ids) == ([agent_id], [block.id])
        assert [b.id for b in await service.blocks_page(actor, made.id, Page())] == [block.id]
        await service.detach_agent(actor, made.id, agent_id)
        await service.detach_block(actor, made.id, block.id)
        got = await service.get(actor, made.id)
        assert (got.agent_ids, got.block_ids) == ([], [])

    async def test_malformed_identity_id_400(
        self, service: IdentityService, actor: Actor, session: AsyncSession
    ) -> None:
        agent_id = await make_agent(session, actor)
        with pytest.raises(BadRequestError, match="Invalid identity ID format: nope"):
            await service.attach_agent(actor, "nope", agent_id)

    async def test_delete_keeps_agents_and_blocks(
        self, service: IdentityService, actor: Actor, session: AsyncSession
    ) -> None:
        agent_id = await make_agent(session, actor)
        block = await BlockService(session, rebuild_prompts).create(actor, CreateBlock(label="human", value="Ann"))
        made = await service.create(actor, create(agent_ids=[agent_id], block_ids=[block.id]))
        await service.delete(actor, made.id)
        with pytest.raises(NotFoundError):
            await service.get(actor, made.id)
        assert await session.scalar(select(func.count()).where(orm.IdentityAgent.identity_id == made.id)) == 0
        assert await session.get(orm.Agent, agent_id) is not None
        assert (await BlockService(session, rebuild_prompts).get(actor, block.id)).value == "Ann"
        with pytest.raises(NotFoundError):
            await service.delete(actor, made.id)


class TestListing:
    async def test_pages_and_filters(self, service: IdentityService, actor: Actor) -> None:
        made = [
            await service.create(actor, create(k, name=n)) for k, n in [("k1", "Ann"), ("k2", "Bob"), ("k3", "Annie")]
        ]

        async def keys(filters: IdentityFilters, page: Page) -> list[str]:
            return [i.identifier_key for i in await service.list_page(actor, filters, page)]

        assert await keys(IdentityFilters(), Page(limit=2, order="asc")) == ["k1", "k2"]
        assert await keys(IdentityFilters(), Page(after=made[1].id, order="asc")) == ["k3"]
        assert await keys(IdentityFilters(), Page(order="desc")) == ["k3", "k2", "k1"]
        assert await keys(IdentityFilters(name="ANN"), Page(order="asc")) == ["k1", "k3"]
        assert await keys(IdentityFilters(identifier_key="k2"), Page(order="asc")) == ["k2"]
        assert await keys(IdentityFilters(name="_"), Page(order="asc")) == []  # LIKE wildcards are literal
