"""``/v1/messages/batches``: create (runs the requests through memlet's loop), list, retrieve, messages, cancel."""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query

from memlet.api.validators import MAX_PAGE_LIMIT
from memlet.db.pagination import Page
from memlet.jobs.deps import JobServiceDep
from memlet.jobs.schemas import BatchJob, CreateBatch, LettaBatchMessages
from memlet.turns.deps import BatchServiceDep

router = APIRouter(prefix="/messages", tags=["messages"])

Limit = Annotated[int | None, Query(ge=1, le=MAX_PAGE_LIMIT)]


@router.post("/batches", operation_id="create_batch", response_model=BatchJob)
async def create_batch(
    service: BatchServiceDep,
    payload: Annotated[CreateBatch, Body(description="Messages and config for all agents")],
) -> Any:
    """Submit a batch of agent runs for asynchronous processing.

    Each request becomes a run of its agent, processed in the background by this server with the agent's own
    model (any provider). The job is ``running`` until every run has ended; ``callback_url`` then receives
    ``{job_id, status, completed_at}``.
    """
    return await service.create(payload)


@router.get("/batches", operation_id="list_batches", response_model=list[BatchJob])
async def list_batches(
    service: JobServiceDep,
    before: str | None = None,
    after: str | None = None,
    limit: Limit = 100,
    order: Literal["asc", "desc"] = "desc",
    order_by: Literal["created_at"] = "created_at",
) -> Any:
    """List the batches still in progress (created or running), newest first by default."""
    return await service.list_batches(Page(before=before, after=after, limit=limit, order=order))


@router.get("/batches/{batch_id}", operation_id="retrieve_batch", response_model=BatchJob)
async def retrieve_batch(batch_id: str, service: JobServiceDep) -> Any:
    """Retrieve the status and details of a batch."""
    return await service.get_batch(batch_id)


@router.get("/batches/{batch_id}/messages", operation_id="list_messages_for_batch", response_model=LettaBatchMessages)
async def list_messages_for_batch(
    batch_id: str,
    service: JobServiceDep,
    before: str | None = None,
    after: str | None = None,
    limit: Limit = 100,
    order: Literal["asc", "desc"] = "desc",
    order_by: Literal["created_at"] = "created_at",
    agent_id: str | None = None,
) -> Any:
    """The messages the batch's runs stored (inputs and replies), newest first by default."""
    page = Page(before=before, after=after, limit=limit, order=order)
    return await service.batch_messages(batch_id, page, agent_id)


@router.patch("/batches/{batch_id}/cancel", operation_id="cancel_batch")
async def cancel_batch(batch_id: str, service: JobServiceDep) -> Any:
    """Cancel a batch: its running turns stop at their next step, and the ones not started never start."""
    await service.cancel_batch(batch_id)
