"""`/v1/passages/search`, `/v1/archives/{id}/passages` (create, batch, delete), `/v1/embeddings/total_storage_size`."""

from typing import Annotated, Any

from fastapi import APIRouter, Header, Query

from memlet.api.deps import ActorDep
from memlet.ids import ArchiveId, PassageId
from memlet.passages import views
from memlet.passages.deps import PassageServiceDep
from memlet.passages.schemas import (
    Passage,
    PassageBatchCreateRequest,
    PassageCreateRequest,
    PassageSearchRequest,
    PassageSearchResult,
)

router = APIRouter(tags=["passages"])
IncludeEmbedding = Annotated[bool, Query(include_in_schema=False)]


@router.post("/passages/search", operation_id="search_passages", response_model=list[PassageSearchResult])
async def search_passages(
    body: PassageSearchRequest, service: PassageServiceDep, actor: ActorDep, include_embedding: IncludeEmbedding = False
) -> Any:
    """Search passages of an agent's archives, one archive, or the whole organization, best score first."""
    hits = await service.search_passages(actor, body, with_embedding=include_embedding)
    return views.search_results(hits, include_embedding=include_embedding)


@router.post("/archives/{archive_id}/passages", operation_id="create_passage_in_archive", response_model=Passage)
async def create_passage_in_archive(
    archive_id: ArchiveId,
    body: PassageCreateRequest,
    service: PassageServiceDep,
    actor: ActorDep,
    include_embedding: IncludeEmbedding = False,
) -> Any:
    """Add a passage to an archive, embedded with the archive's model."""
    rows = await service.create_in_archive(actor, archive_id, [body])
    return views.passage(rows[0], include_embedding=include_embedding)


@router.post(
    "/archives/{archive_id}/passages/batch", operation_id="create_passages_in_archive", response_model=list[Passage]
)
async def create_passages_in_archive(
    archive_id: ArchiveId,
    body: PassageBatchCreateRequest,
    service: PassageServiceDep,
    actor: ActorDep,
    include_embedding: IncludeEmbedding = False,
) -> Any:
    """Add many passages to an archive in one request (embedded in batches)."""
    rows = await service.create_in_archive(actor, archive_id, body.passages)
    return views.passages(rows, include_embedding=include_embedding)


@router.delete(
    "/archives/{archive_id}/passages/{passage_id}", operation_id="delete_passage_from_archive", status_code=204
)
async def delete_passage_from_archive(
    archive_id: ArchiveId, passage_id: PassageId, service: PassageServiceDep, actor: ActorDep
) -> None:
    """Delete a passage from an archive."""
    await service.delete_from_archive(actor, archive_id, passage_id)


@router.get("/embeddings/total_storage_size", operation_id="get_total_storage_size", response_model=float)
async def get_total_storage_size(
    service: PassageServiceDep,
    actor: ActorDep,
    storage_unit: Annotated[str | None, Header(alias="storage-unit")] = "GB",
) -> Any:
    """Total size of the organization's stored embeddings in the given unit (B, KB, MB, GB or TB; GB default)."""
    return await service.storage_size(actor, storage_unit or "GB")
