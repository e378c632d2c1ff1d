"""`/v1/archives` CRUD, the agents of an archive, and `/v1/agents/{id}/archives/attach|detach/{archive_id}`."""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from memlet.api.deps import ActorDep
from memlet.api.validators import PageLimit
from memlet.archives.deps import ArchiveServiceDep
from memlet.archives.schemas import Archive, ArchiveCreateRequest, ArchiveUpdateRequest
from memlet.db.pagination import Page
from memlet.ids import AgentId, ArchiveId, Prefix, id_pattern

router = APIRouter(prefix="/archives", tags=["archives"])
agent_router = APIRouter(prefix="/agents", tags=["agents"])
OrderQuery = Literal["asc", "desc"]


@router.post("/", operation_id="create_archive", response_model=Archive)
async def create_archive(body: ArchiveCreateRequest, service: ArchiveServiceDep, actor: ActorDep) -> Any:
    """Create an archive (its embedding model from `embedding`, `embedding_config` or the default handle)."""
    return await service.create(actor, body)


@router.get("/", operation_id="list_archives", response_model=list[Archive])
async def list_archives(
    service: ArchiveServiceDep,
    actor: ActorDep,
    before: str | None = None,
    after: str | None = None,
    limit: PageLimit = 50,
    order: OrderQuery = "desc",
    order_by: Literal["created_at"] = "created_at",
    name: Annotated[str | None, Query(max_length=255)] = None,
    agent_id: Annotated[str | None, Query(pattern=id_pattern(Prefix.AGENT))] = None,
) -> Any:
    """List archives, newest first by default, optionally by name or by an agent they are attached to."""
    page = Page(before=before, after=after, limit=limit, order=order)
    return await service.list_page(actor, page, name=name, agent_id=agent_id)


@router.get("/{archive_id}", operation_id="retrieve_archive", response_model=Archive)
async def retrieve_archive(archive_id: ArchiveId, service: ArchiveServiceDep, actor: ActorDep) -> Any:
    """Get an archive by id."""
    return await service.get(actor, archive_id)


@router.patch("/{archive_id}", operation_id="modify_archive", response_model=Archive)
async def modify_archive(
    archive_id: ArchiveId, body: ArchiveUpdateRequest, service: ArchiveServiceDep, actor: ActorDep
) -> Any:
    """Rename an archive or change its description."""
    return await service.modify(actor, archive_id, body)


@router.delete("/{archive_id}", operation_id="delete_archive", status_code=204)
async def delete_archive(archive_id: ArchiveId, service: ArchiveServiceDep, actor: ActorDep) -> None:
    """Delete an archive and every passage in it."""
    await service.delete(actor, archive_id)


@agent_router.patch("/{agent_id}/archives/attach/{archive_id}", operation_id="attach_archive_to_agent")
async def attach_archive_to_agent(
    agent_id: AgentId, archive_id: ArchiveId, service: ArchiveServiceDep, actor: ActorDep
) -> None:
    """Attach an archive to an agent: its passages join the agent's archival memory."""
    await service.attach(actor, agent_id, archive_id)


@agent_router.patch("/{agent_id}/archives/detach/{archive_id}", operation_id="detach_archive_from_agent")
async def detach_archive_from_agent(
    agent_id: AgentId, archive_id: ArchiveId, service: ArchiveServiceDep, actor: ActorDep
) -> None:
    """Detach an archive from an agent (the archive and its passages stay)."""
    await service.detach(actor, agent_id, archive_id)
