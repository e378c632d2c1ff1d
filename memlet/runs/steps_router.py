"""``/v1/steps``: list and retrieve steps (one LLM call each), their messages, metrics and feedback."""

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Query

from memlet.api.deps import ActorDep, SessionDep, SettingsDep
from memlet.api.validators import page_query
from memlet.db.pagination import Page
from memlet.ids import StepId
from memlet.messages.schemas import LettaMessage
from memlet.runs.deps import StepServiceDep
from memlet.runs.schemas import FeedbackType, ModifyFeedbackRequest, ProviderTrace, Step, StepMetrics
from memlet.runs.step_repository import StepFilters
from memlet.runs.trace_repository import trace_of_step

router = APIRouter(prefix="/steps", tags=["steps"])


Order = Literal["asc", "desc"]


@router.get("/", operation_id="list_steps", response_model=list[Step])
async def list_steps(
    *,
    service: StepServiceDep,
    page: Annotated[Page, page_query()],
    start_date: datetime | None = None,
    end_date: datetime | None = None,
    model: str | None = None,
    agent_id: str | None = None,
    trace_ids: Annotated[list[str] | None, Query()] = None,
    feedback: FeedbackType | None = None,
    has_feedback: bool | None = None,
    tags: Annotated[list[str] | None, Query()] = None,
    project_id: str | None = None,
    x_project: Annotated[str | None, Header(alias="X-Project")] = None,
) -> Any:
    """List steps, newest first by default, filtered by agent, model, dates, feedback or tags."""
    filters = StepFilters(
        agent_id=agent_id,
        model=model,
        start_date=start_date,
        end_date=end_date,
        trace_ids=trace_ids,
        feedback=feedback,
        has_feedback=has_feedback,
        tags=tags,
        project_id=project_id,
    )
    return await service.list_steps(filters, page)


@router.get("/{step_id}", operation_id="retrieve_step", response_model=Step)
async def retrieve_step(step_id: StepId, service: StepServiceDep) -> Any:
    """Get one step with its token usage."""
    return await service.get(step_id)


@router.patch("/{step_id}/feedback", operation_id="modify_feedback_for_step", response_model=Step)
async def modify_feedback_for_step(step_id: StepId, body: ModifyFeedbackRequest, service: StepServiceDep) -> Any:
    """Rate a step (positive or negative) and set its tags."""
    return await service.set_feedback(step_id, body)


@router.get("/{step_id}/messages", operation_id="list_messages_for_step", response_model=list[LettaMessage])
async def list_messages_for_step(
    *,
    step_id: StepId,
    service: StepServiceDep,
    page: Annotated[Page, page_query(limit=100, order="asc")],
) -> Any:
    """List the messages a step produced, oldest first by default."""
    return await service.messages_of(step_id, page)


@router.get("/{step_id}/metrics", operation_id="retrieve_metrics_for_step", response_model=StepMetrics)
async def retrieve_metrics_for_step(step_id: StepId, service: StepServiceDep) -> Any:
    """Get a step's timings."""
    return await service.metrics(step_id)


@router.get("/{step_id}/trace", operation_id="retrieve_trace_for_step", response_model=ProviderTrace | None)
async def retrieve_trace_for_step(step_id: StepId, actor: ActorDep, session: SessionDep, settings: SettingsDep) -> Any:
    """The raw LLM request and response of a step; ``null`` for a step without one (an unknown step too), or
    with provider-trace tracking off, as Letta answers."""
    if not settings.track_provider_trace:
        return None
    return await trace_of_step(session, actor, step_id)
