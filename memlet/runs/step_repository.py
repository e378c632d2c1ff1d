"""SQL for the steps table: the loop's step rows, the routes' reads and a run's usage totals. Never commits."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Table, bindparam, func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm
from memlet.db.driver import DriverSQL, driver_of, orm_insert_values
from memlet.db.pagination import Page, fetch_page
from memlet.errors import NotFoundError

_STEPS: Table = orm.Step.__table__  # type: ignore[assignment]
# (attribute, column) of every column of a step, and the step commit's INSERT of all of them.
_STEP_COLUMNS = tuple((attr.key, attr.columns[0]) for attr in orm.Step.__mapper__.column_attrs)
_INSERT_STEP = DriverSQL(insert(_STEPS).values({column: bindparam(column.key) for _, column in _STEP_COLUMNS}))


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
    cache_write_tokens: int


class StepRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def get_or_404(self, org_id: str, step_id: str) -> orm.Step:
        """The row, or the 404 Letta answers for an unknown or foreign id."""
        row = await self.find(org_id, step_id)
        if row is None:
            raise NotFoundError("Step", message=f"Step with id {step_id} not found")
        return row

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
                    func.coalesce(func.sum(s.cache_write_tokens), 0),
                ).where(s.run_id == run_id)
            )
        ).one()
        return TokenTotals(*(int(v) for v in row))

    async def insert(self, step: orm.Step) -> None:
        """Insert a new step row in one prebuilt statement on the driver connection, with the values the ORM's
        INSERT would write (columns never set: their Python default, else SQL NULL, never JSON ``null``). The
        object stays out of the session."""
        driver = await driver_of(self.session)
        await driver.fetch(_INSERT_STEP, orm_insert_values(step, _STEP_COLUMNS))

    async def merge_step(self, step: orm.Step) -> None:
        """Insert or update a step row built outside this session."""
        await self.session.merge(step)
