"""GroupService and GroupRepository against real Postgres: templated creates, the repository calls the sleeptime
code builds on, organization scoping, and the pure manager-config rules."""

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.db import models as orm
from memlet.errors import BadRequestError, NotFoundError
from memlet.groups import rules
from memlet.groups.repository import GroupRepository
from memlet.groups.schemas import GroupCreate, InternalTemplateGroupCreate, TemplateIds
from memlet.groups.service import GroupService


@pytest.fixture
async def actor(session: AsyncSession) -> Actor:
    """A fresh organization per test, so listings only see this test's rows."""
    org_id = ids.new_id(ids.Prefix.ORGANIZATION)
    session.add(orm.Organization(id=org_id, name="groups-test"))
    await session.flush()
    return Actor(ids.DEFAULT_USER_ID, org_id)


@pytest.fixture
def service(session: AsyncSession, actor: Actor) -> GroupService:
    return GroupService(session, actor)


async def make_agent(session: AsyncSession, actor: Actor, name: str) -> str:
    agent = orm.Agent(
        id=ids.new_id(ids.Prefix.AGENT),
        organization_id=actor.organization_id,
        name=name,
        system="",
        llm_config={"model": "gpt-4o-mini", "model_endpoint_type": "openai", "context_window": 128000},
        tool_rules=[],
        message_ids=[],
    )
    session.add(agent)
    await session.flush()
    return agent.id


def spec(agent_ids: list[str], **config: object) -> GroupCreate:
    body: dict[str, object] = {"agent_ids": agent_ids, "description": "d"}
    if config:
        body["manager_config"] = config
    return GroupCreate.model_validate(body)


class TestTemplatedCreate:
    async def test_template_ids_are_stored(self, service: GroupService, session: AsyncSession, actor: Actor) -> None:
        a = await make_agent(session, actor, "a")
        template = TemplateIds(template_id="tpl-1", base_template_id="base-1", deployment_id="dep-1")
        group = await service.create(spec([a]), template=template)
        assert (group.template_id, group.base_template_id, group.deployment_id) == ("tpl-1", "base-1", "dep-1")
        assert (await service.get(group.id)).deployment_id == "dep-1"

    async def test_internal_template_body_carries_them(
        self, service: GroupService, session: AsyncSession, actor: Actor
    ) -> None:
        a = await make_agent(session, actor, "a")
        body = InternalTemplateGroupCreate.model_validate(
            {"agent_ids": [a], "description": "", "template_id": "t", "base_template_id": "b", "deployment_id": "d"}
        )
        group = await service.create(body)
        assert (group.template_id, group.base_template_id, group.deployment_id) == ("t", "b", "d")


class TestScoping:
    async def test_other_orgs_agents_and_groups_are_invisible(
        self, service: GroupService, session: AsyncSession, actor: Actor
    ) -> None:
        a = await make_agent(session, actor, "a")
        group = await service.create(spec([a]))
        other = GroupService(session, Actor(ids.DEFAULT_USER_ID, ids.DEFAULT_ORG_ID))
        with pytest.raises(NotFoundError):
            await other.get(group.id)
        with pytest.raises(NotFoundError) as err:
            await other.create(spec([a]))
        assert err.value.message == f"Items not found in agents: {{'{a}'}}"

    async def test_dynamic_duplicate_names_400(
        self, service: GroupService, session: AsyncSession, actor: Actor
    ) -> None:
        boss = await make_agent(session, actor, "boss")
        one, two = await make_agent(session, actor, "same"), await make_agent(session, actor, "same")
        with pytest.raises(BadRequestError) as err:
            await service.create(spec([one, two], manager_type="dynamic", manager_agent_id=boss))
        assert err.value.message == "Duplicate agent names found in the provided agent IDs."


class TestRepository:
    async def test_calls_the_sleeptime_code_uses(
        self, service: GroupService, session: AsyncSession, actor: Actor
    ) -> None:
        boss, a, b = [await make_agent(session, actor, n) for n in ("boss", "a", "b")]
        group = await service.create(
            spec([b, a], manager_type="sleeptime", manager_agent_id=boss, sleeptime_agent_frequency=5)
        )
        repo = GroupRepository(session)
        assert await repo.agent_ids(group.id) == [b, a]
        assert [g.id for g in await repo.managed_by(boss)] == [group.id]
        assert await repo.managed_by(boss, "supervisor") == []
        assert [g.id for g in await repo.groups_of_agent(a)] == [group.id]
        assert await repo.groups_of_agent(boss) == []
        message_id = ids.new_id(ids.Prefix.MESSAGE)
        await repo.update(group.id, turns_counter=0, last_processed_message_id=message_id)
        row = await repo.find(actor.organization_id, group.id)
        assert row is not None
        await session.refresh(row)
        assert (row.turns_counter, row.last_processed_message_id) == (0, message_id)
        await repo.delete(group.id)
        assert await repo.find(actor.organization_id, group.id) is None
        assert await repo.agent_ids(group.id) == []


class TestRules:
    def test_set_repr_is_pythons(self) -> None:
        assert rules.set_repr(["b", "a"]) == "{'a', 'b'}"
        assert rules.set_repr([]) == "set()"

    @pytest.mark.parametrize(("high", "low"), [(10, None), (None, 10), (4, 3), (10, 4), (6, 6), (5, 9)])
    def test_buffer_range_rejects(self, high: int | None, low: int | None) -> None:
        with pytest.raises(BadRequestError):
            rules.ensure_buffer_range(high, low)

    @pytest.mark.parametrize(("high", "low"), [(None, None), (30, 15), (6, 5)])
    def test_buffer_range_accepts(self, high: int | None, low: int | None) -> None:
        rules.ensure_buffer_range(high, low)
