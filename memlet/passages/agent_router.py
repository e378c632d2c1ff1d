"""`/v1/agents/{agent_id}/archival-memory`: list, insert, search and delete an agent's archival passages."""

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from memlet.api.deps import ActorDep
from memlet.api.validators import PageLimit
from memlet.db.pagination import Page
from memlet.ids import AgentId
from memlet.passages import views
from memlet.passages.deps import PassageServiceDep
from memlet.passages.repository import PassageFilters
from memlet.passages.schemas import MAX_PASSAGE_CHARS, ArchivalMemorySearchResponse, CreateArchivalMemory, Passage
from memlet.passages.service import ARCHIVAL_TOKEN_LIMIT, in_zone

router = APIRouter(prefix="/agents", tags=["agents"])
IncludeEmbedding = Annotated[bool, Query(include_in_schema=False)]


@router.get("/{agent_id}/archival-memory", operation_id="list_passages", response_model=list[Passage])
async def list_passages(
    agent_id: AgentId,
    service: PassageServiceDep,
    actor: ActorDep,
    after: str | None = None,
    before: str | None = None,
    limit: PageLimit = 100,
    search: Annotated[str | None, Query(max_length=MAX_PASSAGE_CHARS)] = None,
    ascending: bool | None = True,
    include_embedding: IncludeEmbedding = False,
) -> Any:
    """List an agent's archival memories, oldest first by default; `search` matches text case-insensitively."""
    page = Page(before=before, after=after, limit=limit, order="desc" if ascending is False else "asc")
    rows = await service.list_for_agent(actor, agent_id, page, search)
    return views.passages(rows, include_embedding=include_embedding)


@router.post("/{agent_id}/archival-memory", operation_id="create_passage", response_model=list[Passage])
async def create_passage(
    agent_id: AgentId,
    body: CreateArchivalMemory,
    service: PassageServiceDep,
    actor: ActorDep,
    include_embedding: IncludeEmbedding = False,
) -> Any:
    """Insert a memory into the agent's archival memory (its default archive), embedded with its model."""
    rows = await service.insert_for_agent(
        actor, agent_id, body.text, body.tags, body.created_at, token_limit=ARCHIVAL_TOKEN_LIMIT
    )
    return views.passages(rows, include_embedding=include_embedding)


@router.get(
    "/{agent_id}/archival-memory/search",
    operation_id="search_archival_memory",
    response_model=ArchivalMemorySearchResponse,
)
async def search_archival_memory(
    agent_id: AgentId,
    service: PassageServiceDep,
    actor: ActorDep,
    query: Annotated[str, Query(max_length=MAX_PASSAGE_CHARS)],
    tags: Annotated[list[str] | None, Query()] = None,
    tag_match_mode: Literal["any", "all"] = "any",
    top_k: Annotated[int | None, Query(ge=1, le=1000)] = None,
    start_datetime: datetime | None = None,
    end_datetime: datetime | None = None,
) -> Any:
    """Semantic search of the agent's archival memory, filtered by tags and dates (naive ones in the agent's zone)."""
    agent = await service.archives.agent(actor, agent_id)
    start, end = in_zone(start_datetime, agent.timezone), in_zone(end_datetime, agent.timezone)
    filters = PassageFilters(tags or (), tag_match_mode, start, end)
    hits = await service.search_agent(actor, agent, query, filters, top_k)
    results = views.archival_results(hits, agent.timezone)
    return {"results": results, "count": len(results)}


@router.delete("/{agent_id}/archival-memory/{memory_id}", operation_id="delete_passage")
async def delete_passage(memory_id: str, agent_id: AgentId, service: PassageServiceDep, actor: ActorDep) -> Any:
    """Delete one memory from the agent's archival memory."""
    await service.delete_for_agent(actor, agent_id, memory_id)
    return JSONResponse({"message": f"Memory id={memory_id} successfully deleted"})
