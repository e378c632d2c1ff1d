"""Letta's ``GET /v1/_internal_runs/`` (the run listing with Letta Cloud's extra filters) and the deprecated
``GET /v1/telemetry/{step_id}``."""

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from memlet.api.deps import ActorDep, SessionDep, SettingsDep
from memlet.api.validators import MAX_PAGE_LIMIT
from memlet.db.pagination import Page
from memlet.messages.schemas import StopReasonType
from memlet.runs.deps import RunServiceDep
from memlet.runs.router import run_filters
from memlet.runs.schemas import ProviderTrace, Run
from memlet.runs.trace_repository import trace_of_step

router = APIRouter(prefix="/_internal_runs", tags=["_internal_runs"])
telemetry_router = APIRouter(prefix="/telemetry", tags=["telemetry"])

ComparisonOperator = Literal["eq", "gte", "lte"]


def _q(description: str, **extra: Any) -> Any:
    return Query(description=description, **extra)


@router.get("/", operation_id="list_internal_runs", response_model=list[Run], summary="List Internal Runs")
async def list_internal_runs(
    service: RunServiceDep,
    run_id: Annotated[str | None, _q("Filter by a specific run ID.")] = None,
    agent_id: Annotated[str | None, _q("The unique identifier of the agent associated with the run.")] = None,
    agent_ids: Annotated[list[str] | None, _q("Deprecated in favor of agent_id field.", deprecated=True)] = None,
    statuses: Annotated[list[str] | None, _q("Filter runs by status. Can specify multiple statuses.")] = None,
    background: Annotated[bool | None, _q("If True, filters for runs that were created in background mode.")] = None,
    stop_reason: Annotated[StopReasonType | None, _q("Filter runs by stop reason.")] = None,
    template_family: Annotated[str | None, _q("Filter runs by template family (base_template_id).")] = None,
    step_count: Annotated[int | None, _q("Filter runs by step count, compared with step_count_operator.")] = None,
    step_count_operator: Annotated[ComparisonOperator, _q("Operator for step_count: 'eq', 'gte' or 'lte'.")] = "eq",
    tools_used: Annotated[list[str] | None, _q("Filter runs that used any of the specified tools.")] = None,
    before: Annotated[str | None, _q("Run ID cursor: runs that come before it in the sort order.")] = None,
    after: Annotated[str | None, _q("Run ID cursor: runs that come after it in the sort order.")] = None,
    limit: Annotated[int | None, _q("Maximum number of runs to return", ge=1, le=MAX_PAGE_LIMIT)] = 100,
    order: Annotated[Literal["asc", "desc"], _q("Sort order: 'asc' oldest (or fastest) first.")] = "desc",
    order_by: Annotated[Literal["created_at", "duration"], _q("Field to sort by")] = "created_at",
    active: Annotated[bool, _q("Filter for active runs.")] = False,
    ascending: Annotated[bool, _q("Deprecated in favor of order field.", deprecated=True)] = False,
    project_id: Annotated[str | None, _q("Filter runs by project ID.")] = None,
    conversation_id: Annotated[str | None, _q("Filter runs by conversation ID.")] = None,
    duration_percentile: Annotated[int | None, _q("Only runs slower than this percentile (1-100).")] = None,
    duration_value: Annotated[int | None, _q("Duration in nanoseconds, compared with duration_operator.")] = None,
    duration_operator: Annotated[Literal["gt", "lt", "eq"] | None, _q("Operator for duration_value.")] = None,
    start_date: Annotated[datetime | None, _q("Runs created on or after this date (ISO 8601).")] = None,
    end_date: Annotated[datetime | None, _q("Runs created on or before this date (ISO 8601).")] = None,
) -> Any:
    """List runs with every filter of Letta's internal listing: template family, project, steps, tools, duration
    and dates, sorted by creation time or duration."""
    filters = run_filters(
        agent_id=agent_id,
        agent_ids=agent_ids,
        statuses=statuses,
        active=active,
        background=background,
        stop_reason=stop_reason,
        conversation_id=conversation_id,
        run_id=run_id,
        template_family=template_family,
        project_id=project_id,
        start_date=start_date,
        end_date=end_date,
        step_count=step_count,
        step_count_operator=step_count_operator,
        tools_used=tools_used,
        duration_value=duration_value,
        duration_operator=duration_operator,
        duration_percentile=duration_percentile,
    )
    page = Page(before=before, after=after, limit=limit, order="asc" if ascending else order)
    return await service.list_runs(filters, page, order_by=order_by)


@telemetry_router.get(
    "/{step_id}", operation_id="retrieve_provider_trace", response_model=ProviderTrace | None, deprecated=True
)
async def retrieve_provider_trace(step_id: str, actor: ActorDep, session: SessionDep, settings: SettingsDep) -> Any:
    """**DEPRECATED**: use ``GET /v1/steps/{step_id}/trace``. The step's provider trace; ``null`` for any other
    id, or with tracking off, as Letta answers."""
    if not settings.track_provider_trace:
        return None
    return await trace_of_step(session, actor, step_id)
