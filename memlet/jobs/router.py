"""``/v1/jobs``: list, list active, retrieve, cancel and delete jobs (batch jobs included)."""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from memlet.api.validators import MAX_PAGE_LIMIT
from memlet.db.pagination import Page
from memlet.ids import JobId
from memlet.jobs.deps import JobServiceDep
from memlet.jobs.schemas import Job

router = APIRouter(prefix="/jobs", tags=["jobs"])

DEPRECATED_SOURCE = "Deprecated: Use `folder_id` parameter instead. Only list jobs associated with the source."
Limit = Annotated[int | None, Query(ge=1, le=MAX_PAGE_LIMIT)]


@router.get("/", operation_id="list_jobs", response_model=list[Job])
async def list_jobs(
    service: JobServiceDep,
    source_id: Annotated[str | None, Query(deprecated=True, description=DEPRECATED_SOURCE)] = None,
    before: str | None = None,
    after: str | None = None,
    limit: Limit = 100,
    order: Literal["asc", "desc"] = "desc",
    order_by: Literal["created_at"] = "created_at",
    active: bool = False,
    ascending: Annotated[bool, Query(deprecated=True)] = True,
) -> Any:
    """List jobs of type ``job`` (memlet, like Letta 0.16.8, creates none: batches are listed under batches)."""
    # As in Letta: the deprecated flag wins only when it was turned off explicitly.
    direction = "desc" if ascending is False else order
    return await service.list_jobs(Page(before=before, after=after, limit=limit, order=direction), active=active)


@router.get("/active", operation_id="list_active_jobs", deprecated=True, response_model=list[Job])
async def list_active_jobs(
    service: JobServiceDep,
    source_id: Annotated[str | None, Query(deprecated=True, description=DEPRECATED_SOURCE)] = None,
    before: str | None = None,
    after: str | None = None,
    limit: Limit = 50,
    ascending: bool = True,
) -> Any:
    """List jobs that are created or running, oldest first by default."""
    page = Page(before=before, after=after, limit=limit, order="asc" if ascending else "desc")
    return await service.list_jobs(page, active=True)


@router.get("/{job_id}", operation_id="retrieve_job", response_model=Job)
async def retrieve_job(job_id: JobId, service: JobServiceDep) -> Any:
    """Get a job (a batch job too) and its status."""
    return await service.get(job_id)


@router.delete("/{job_id}", operation_id="delete_job", response_model=Job)
async def delete_job(job_id: JobId, service: JobServiceDep) -> Any:
    """Delete a job; the runs of a batch and their messages stay."""
    return await service.delete(job_id)


@router.patch("/{job_id}/cancel", operation_id="cancel_job", response_model=Job)
async def cancel_job(job_id: JobId, service: JobServiceDep) -> Any:
    """Cancel a job; a batch's runs stop at their next step and the ones not started never start."""
    return await service.cancel(job_id)
