"""Read (and small client-driven write) queries for runs and steps: list, retrieve, usage, cancel, feedback.

The loop's own writes live in ``memlet.runs.repository``; this module serves the HTTP routes.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.api.pagination import Page, fetch_page
from memlet.db import models as orm


@dataclass(frozen=True)
class RunFilters:
    """The filters of ``GET /v1/runs/``."""

    agent_ids: Sequence[str] | None = None
    statuses: Sequence[str] | None = None
    background: bool | None = None
    stop_reason: str | None = None
    conversation_id: str | None = None


@dataclass(frozen=True)
class StepFilters:
    """The filters of ``GET /v1/steps/``."""

    agent_id: str | None = None
    run_id: str | None = None
    model: str | None = None
    start_date: datetime | None = None
    end_date: datetime | None = None
    trace_ids: Sequence[str] | None = None
    feedback: str | None = None
    has_feedback: bool | None = None
    tags: Sequence[str] | None = None
    project_id: str | None = None


@dataclass(frozen=True)
class TokenTotals:
    completion_tokens: int
    prompt_tokens: int
    total_tokens: int
    cached_input_tokens: int
    reasoning_tokens: int
    step_count: int


class RunQueries:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def find(self, org_id: str, run_id: str) -> orm.Run | None:
        return await self.session.scalar(select(orm.Run).where(orm.Run.id == run_id, orm.Run.organization_id == org_id))

    async def by_ids(self, org_id: str, run_ids: Sequence[str]) -> list[orm.Run]:
        rows = await self.session.scalars(
            select(orm.Run).where(orm.Run.id.in_(list(run_ids)), orm.Run.organization_id == org_id)
        )
        return list(rows)

    async def list_runs(self, org_id: str, filters: RunFilters, page: Page) -> list[orm.Run]:
        r = orm.Run
        stmt = select(r).where(r.organization_id == org_id)
        if filters.agent_ids:
            stmt = stmt.where(r.agent_id.in_(list(filters.agent_ids)))
        if filters.statuses:
            stmt = stmt.where(r.status.in_(list(filters.statuses)))
        if filters.background is not None:
            stmt = stmt.where(r.background.is_(filters.background))
        if filters.stop_reason is not None:
            stmt = stmt.where(r.stop_reason == filters.stop_reason)
        if filters.conversation_id is not None:
            stmt = stmt.where(r.conversation_id == filters.conversation_id)
        return await fetch_page(self.session, stmt, page, sort_col=r.created_at, id_col=r.id)

    async def delete(self, run_id: str) -> None:
        await self.session.execute(delete(orm.Run).where(orm.Run.id == run_id))

    async def mark_failed(self, run_id: str, error: str) -> None:
        """Close a run that failed before the loop took it over (the loop closes the others itself)."""
        run = await self.session.get(orm.Run, run_id, with_for_update=True)
        if run is None or run.status in ("completed", "failed", "cancelled"):
            return
        run.status = "failed"
        run.completed_at = datetime.now(UTC)
        run.metadata_ = {**(run.metadata_ or {}), "error": error}

    async def token_totals(self, run_id: str) -> TokenTotals:
        """Usage summed over a run's steps, in one aggregate query."""
        s = orm.Step
        row = (
            await self.session.execute(
                select(
                    func.coalesce(func.sum(s.completion_tokens), 0),
                    func.coalesce(func.sum(s.prompt_tokens), 0),
                    func.coalesce(func.sum(s.total_tokens), 0),
                    func.coalesce(func.sum(s.cached_input_tokens), 0),
                    func.coalesce(func.sum(s.reasoning_tokens), 0),
                    func.count(s.id),
                ).where(s.run_id == run_id)
            )
        ).one()
        return TokenTotals(*(int(v) for v in row))


class StepQueries:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def find(self, org_id: str, step_id: str) -> orm.Step | None:
        return await self.session.scalar(
            select(orm.Step).where(orm.Step.id == step_id, orm.Step.organization_id == org_id)
        )

    async def list_steps(self, org_id: str, filters: StepFilters, page: Page) -> list[orm.Step]:
        s = orm.Step
        stmt = select(s).where(s.organization_id == org_id)
        for column, value in (
            (s.agent_id, filters.agent_id),
            (s.run_id, filters.run_id),
            (s.model, filters.model),
            (s.feedback, filters.feedback),
            (s.project_id, filters.project_id),
        ):
            if value is not None:
                stmt = stmt.where(column == value)
        if filters.start_date is not None:
            stmt = stmt.where(s.created_at >= filters.start_date)
        if filters.end_date is not None:
            stmt = stmt.where(s.created_at <= filters.end_date)
        if filters.trace_ids:
            stmt = stmt.where(s.trace_id.in_(list(filters.trace_ids)))
        if filters.has_feedback is not None:
            stmt = stmt.where(s.feedback.is_not(None) if filters.has_feedback else s.feedback.is_(None))
        if filters.tags:
            # Steps carrying every requested tag (JSONB containment).
            stmt = stmt.where(s.tags.contains(list(filters.tags)))
        return await fetch_page(self.session, stmt, page, sort_col=s.created_at, id_col=s.id)
