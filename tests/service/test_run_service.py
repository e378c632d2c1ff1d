"""RunService and StepService against real Postgres: 404s, id format, listing filters and order, usage, steps."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.db import models as orm
from memlet.db.pagination import Page
from memlet.errors import BadRequestError, NotFoundError
from memlet.runs.repository import RunFilters
from memlet.runs.schemas import ModifyFeedbackRequest
from memlet.runs.service import RunService, StepService
from memlet.runs.step_repository import StepFilters

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
async def actor(session: AsyncSession) -> Actor:
    org_id = ids.new_id(ids.Prefix.ORGANIZATION)
    session.add(orm.Organization(id=org_id, name="runs-test"))
    await session.flush()
    return Actor(ids.DEFAULT_USER_ID, org_id)


async def make_agent(session: AsyncSession, actor: Actor) -> str:
    agent = orm.Agent(
        id=ids.new_id(ids.Prefix.AGENT),
        organization_id=actor.organization_id,
        name="runner",
        system="test",
        llm_config={"model": "gpt-4o-mini", "model_endpoint_type": "openai", "context_window": 128000},
        tool_rules=[],
        message_ids=[],
    )
    session.add(agent)
    await session.flush()
    return agent.id


async def make_run(session: AsyncSession, actor: Actor, agent_id: str, minute: int, **fields: Any) -> str:
    run = orm.Run(
        id=ids.new_id(ids.Prefix.RUN),
        organization_id=actor.organization_id,
        agent_id=agent_id,
        created_at=T0 + timedelta(minutes=minute),
        **fields,
    )
    session.add(run)
    await session.flush()
    return run.id


async def make_step(session: AsyncSession, actor: Actor, agent_id: str, run_id: str, minute: int, **fields: Any) -> str:
    step = orm.Step(
        id=ids.new_id(ids.Prefix.STEP),
        organization_id=actor.organization_id,
        agent_id=agent_id,
        run_id=run_id,
        created_at=T0 + timedelta(minutes=minute),
        **fields,
    )
    session.add(step)
    await session.flush()
    return step.id


STRANGER = Actor(ids.DEFAULT_USER_ID, ids.DEFAULT_ORG_ID)


class TestRuns:
    async def test_get_returns_stored_fields(self, session: AsyncSession, actor: Actor) -> None:
        agent_id = await make_agent(session, actor)
        run_id = await make_run(
            session, actor, agent_id, 0, status="completed", stop_reason="end_turn", background=True
        )
        run = await RunService(session, actor).get(run_id)
        assert (run.id, run.agent_id, run.status, run.stop_reason, run.background) == (
            run_id,
            agent_id,
            "completed",
            "end_turn",
            True,
        )

    async def test_unknown_and_other_org_run_404(self, session: AsyncSession, actor: Actor) -> None:
        missing = ids.new_id(ids.Prefix.RUN)
        with pytest.raises(NotFoundError, match=f"Run with id {missing} not found"):
            await RunService(session, actor).get(missing)
        run_id = await make_run(session, actor, await make_agent(session, actor), 0)
        for call in (RunService(session, STRANGER).get(run_id), RunService(session, STRANGER).delete(run_id)):
            with pytest.raises(NotFoundError):
                await call
        assert (await RunService(session, actor).get(run_id)).id == run_id

    async def test_malformed_run_id_400(self, session: AsyncSession, actor: Actor) -> None:
        with pytest.raises(BadRequestError, match="Invalid run ID format: nope"):
            await RunService(session, actor).get("nope")

    async def test_list_filters_and_newest_first_pages(self, session: AsyncSession, actor: Actor) -> None:
        first, second = await make_agent(session, actor), await make_agent(session, actor)
        old = await make_run(session, actor, first, 0, status="completed", stop_reason="end_turn")
        mid = await make_run(session, actor, first, 1, status="running", background=True)
        new = await make_run(session, actor, second, 2, status="failed", stop_reason="error")
        service = RunService(session, actor)

        async def listed(filters: RunFilters, page: Page | None = None) -> list[str]:
            return [r.id for r in await service.list_runs(filters, page or Page(limit=None))]

        assert await listed(RunFilters()) == [new, mid, old]
        assert await listed(RunFilters(), Page(limit=2, order="asc")) == [old, mid]
        assert await listed(RunFilters(), Page(after=new, order="desc")) == [mid, old]
        assert await listed(RunFilters(agent_ids=[first])) == [mid, old]
        assert await listed(RunFilters(statuses=["running", "failed"])) == [new, mid]
        assert await listed(RunFilters(background=True)) == [mid]
        assert await listed(RunFilters(stop_reason="error")) == [new]
        assert await RunService(session, STRANGER).list_runs(RunFilters(agent_ids=[first]), Page()) == []

    async def test_delete_removes_run_and_its_steps(self, session: AsyncSession, actor: Actor) -> None:
        agent_id = await make_agent(session, actor)
        run_id = await make_run(session, actor, agent_id, 0)
        step_id = await make_step(session, actor, agent_id, run_id, 0)
        await RunService(session, actor).delete(run_id)
        session.expire_all()
        with pytest.raises(NotFoundError):
            await RunService(session, actor).get(run_id)
        with pytest.raises(NotFoundError):
            await StepService(session, actor).get(step_id)

    async def test_usage_sums_steps_and_steps_listed_in_order(self, session: AsyncSession, actor: Actor) -> None:
        agent_id = await make_agent(session, actor)
        run_id = await make_run(session, actor, agent_id, 0)
        other_run = await make_run(session, actor, agent_id, 1)
        a = await make_step(session, actor, agent_id, run_id, 0, prompt_tokens=10, completion_tokens=2, total_tokens=12)
        b = await make_step(
            session,
            actor,
            agent_id,
            run_id,
            1,
            prompt_tokens=20,
            completion_tokens=3,
            total_tokens=23,
            cached_input_tokens=5,
        )
        await make_step(session, actor, agent_id, other_run, 2, prompt_tokens=999, total_tokens=999)
        service = RunService(session, actor)
        usage = await service.usage(run_id)
        assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (30, 5, 35)
        assert usage.prompt_tokens_details is not None and usage.prompt_tokens_details.cached_tokens == 5
        assert [s.id for s in await service.steps_of(run_id, Page(order="asc"))] == [a, b]
        assert [s.id for s in await service.steps_of(run_id, Page(order="desc"))] == [b, a]


class TestSteps:
    async def test_get_and_404s(self, session: AsyncSession, actor: Actor) -> None:
        agent_id = await make_agent(session, actor)
        run_id = await make_run(session, actor, agent_id, 0)
        step_id = await make_step(session, actor, agent_id, run_id, 0, model="gpt-4o-mini", total_tokens=7)
        step = await StepService(session, actor).get(step_id)
        assert (step.id, step.run_id, step.agent_id, step.model, step.total_tokens) == (
            step_id,
            run_id,
            agent_id,
            "gpt-4o-mini",
            7,
        )
        missing = ids.new_id(ids.Prefix.STEP)
        with pytest.raises(NotFoundError, match=f"Step with id {missing} not found"):
            await StepService(session, actor).get(missing)
        with pytest.raises(NotFoundError):
            await StepService(session, STRANGER).get(step_id)

    async def test_list_filters(self, session: AsyncSession, actor: Actor) -> None:
        agent_id = await make_agent(session, actor)
        run_id = await make_run(session, actor, agent_id, 0)
        a = await make_step(session, actor, agent_id, run_id, 0, model="m1", tags=["x", "y"], feedback="positive")
        b = await make_step(session, actor, agent_id, run_id, 5, model="m2", tags=["x"], trace_id="t-2")
        service = StepService(session, actor)

        async def listed(filters: StepFilters) -> list[str]:
            return [s.id for s in await service.list_steps(filters, Page(limit=None, order="asc"))]

        assert await listed(StepFilters(run_id=run_id)) == [a, b]
        assert await listed(StepFilters(model="m2")) == [b]
        assert await listed(StepFilters(tags=["x", "y"])) == [a]
        assert await listed(StepFilters(has_feedback=True)) == [a]
        assert await listed(StepFilters(has_feedback=False)) == [b]
        assert await listed(StepFilters(trace_ids=["t-2"])) == [b]
        assert await listed(StepFilters(start_date=T0 + timedelta(minutes=1))) == [b]
        assert await listed(StepFilters(end_date=T0 + timedelta(minutes=1))) == [a]

    async def test_feedback_sets_value_and_keeps_tags_when_unsent(self, session: AsyncSession, actor: Actor) -> None:
        agent_id = await make_agent(session, actor)
        run_id = await make_run(session, actor, agent_id, 0)
        step_id = await make_step(session, actor, agent_id, run_id, 0, tags=["keep"])
        service = StepService(session, actor)
        await service.set_feedback(step_id, ModifyFeedbackRequest.model_validate({"feedback": "negative"}))
        session.expire_all()
        step = await service.get(step_id)
        assert (step.feedback, step.tags) == ("negative", ["keep"])
        with pytest.raises(NotFoundError):
            await StepService(session, STRANGER).set_feedback(step_id, ModifyFeedbackRequest(feedback="positive"))
