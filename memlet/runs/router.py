"""``/v1/runs``: list, retrieve, delete, and a run's messages, usage, steps and metrics."""

from typing import Annotated, Any, Literal, get_args

from fastapi import APIRouter, Query

from memlet.api.validators import MAX_PAGE_LIMIT, page_query
from memlet.db.pagination import Page
from memlet.errors import BadRequestError, NotImplementedFeatureError
from memlet.messages.schemas import LettaMessage, StopReasonType
from memlet.runs.deps import RunServiceDep
from memlet.runs.repository import RunFilters
from memlet.runs.schemas import ACTIVE_STATUSES, Run, RunMetrics, RunStatus, Step, UsageStatistics

router = APIRouter(prefix="/runs", tags=["runs"])


Order = Literal["asc", "desc"]

TRACE_STORE_MISSING = (
    "OTEL traces require ClickHouse. Set LETTA_CLICKHOUSE_ENDPOINT and configure ClickHouse connection."
)


@router.get("/", operation_id="list_runs", response_model=list[Run])
async def list_runs(
    service: RunServiceDep,
    agent_id: str | None = None,
    agent_ids: Annotated[list[str] | None, Query(deprecated=True)] = None,
    statuses: Annotated[list[str] | None, Query()] = None,
    background: bool | None = None,
    stop_reason: StopReasonType | None = None,
    conversation_id: str | None = None,
    before: str | None = None,
    after: str | None = None,
    limit: Annotated[int | None, Query(ge=1, le=MAX_PAGE_LIMIT)] = 100,
    order: Order = "desc",
    order_by: Literal["created_at"] = "created_at",
    active: bool = False,
    ascending: Annotated[bool, Query(deprecated=True)] = False,
) -> Any:
    """List runs, newest first by default, filtered by agent, status, stop reason or background mode."""
    filters = run_filters(
        agent_id=agent_id,
        agent_ids=agent_ids,
        statuses=statuses,
        active=active,
        background=background,
        stop_reason=stop_reason,
        conversation_id=conversation_id,
    )
    page = Page(before=before, after=after, limit=limit, order="asc" if ascending else order)
    return await service.list_runs(filters, page)


def run_filters(
    *,
    agent_id: str | None,
    agent_ids: list[str] | None,
    statuses: list[str] | None,
    active: bool,
    stop_reason: StopReasonType | None,
    **other: Any,
) -> RunFilters:
    """Letta's reading of the run list parameters: ``agent_id`` wins over the deprecated ``agent_ids``, and
    ``active`` means created or running when no ``statuses`` are given. A status that is not a run status is
    Letta's 400 naming it (a filter that matches nothing would hide the typo)."""
    for status in statuses or ():
        if status not in get_args(RunStatus):
            raise BadRequestError(f"'{status}' is not a valid RunStatus")
    return RunFilters(
        agent_ids=[agent_id] if agent_id else agent_ids,
        statuses=statuses if statuses is not None else (ACTIVE_STATUSES if active else None),
        stop_reason=stop_reason.value if stop_reason else None,
        **other,
    )


@router.get("/active", operation_id="list_active_runs", deprecated=True, response_model=list[Run])
async def list_active_runs(service: RunServiceDep, agent_id: str | None = None, background: bool | None = None) -> Any:
    """List runs that are created or running."""
    filters = RunFilters(agent_ids=[agent_id] if agent_id else None, statuses=ACTIVE_STATUSES, background=background)
    return await service.list_runs(filters, Page(limit=100))


@router.get("/{run_id}", operation_id="retrieve_run", response_model=Run)
async def retrieve_run(run_id: str, service: RunServiceDep) -> Any:
    """Get a run and its status."""
    return await service.get(run_id)


@router.delete("/{run_id}", operation_id="delete_run")
async def delete_run(run_id: str, service: RunServiceDep) -> Any:
    """Delete a run (its steps go with it; its messages stay in the agent's history)."""
    await service.delete(run_id)


@router.get("/{run_id}/messages", operation_id="list_messages_for_run", response_model=list[LettaMessage])
async def list_messages_for_run(
    *,
    run_id: str,
    service: RunServiceDep,
    page: Annotated[Page, page_query(limit=100, order="asc")],
) -> Any:
    """List the messages a run stored, its input included, oldest first by default."""
    return await service.messages_of(run_id, page)


@router.get("/{run_id}/usage", operation_id="retrieve_usage_for_run", response_model=UsageStatistics)
async def retrieve_usage_for_run(run_id: str, service: RunServiceDep) -> Any:
    """Get a run's token usage, summed over its steps."""
    return await service.usage(run_id)


@router.get("/{run_id}/metrics", operation_id="retrieve_metrics_for_run", response_model=RunMetrics)
async def retrieve_metrics_for_run(run_id: str, service: RunServiceDep) -> Any:
    """Get a run's timing and step metrics."""
    return await service.metrics(run_id)


@router.get("/{run_id}/steps", operation_id="list_steps_for_run", response_model=list[Step])
async def list_steps_for_run(
    *,
    run_id: str,
    service: RunServiceDep,
    page: Annotated[Page, page_query(limit=100)],
) -> Any:
    """List a run's steps (one per LLM call), newest first by default."""
    return await service.steps_of(run_id, page)


@router.get("/{run_id}/trace", operation_id="retrieve_trace_for_run", response_model=list[dict[str, Any]])
async def retrieve_trace_for_run(
    run_id: str,
    service: RunServiceDep,
    limit: Annotated[int, Query(ge=1, le=5000, description="Maximum number of spans to return")] = 1000,
) -> Any:
    """Retrieve OTEL trace spans for a run.

    Letta reads them from ClickHouse and answers 501 without it; memlet has no trace store, so it answers
    Letta's 501 for a run the caller can see, and 404 for any other (run timings are in ``/metrics`` and the steps).
    """
    await service.get(run_id)
    raise NotImplementedFeatureError(TRACE_STORE_MISSING)
