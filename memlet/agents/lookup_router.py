"""Agents found through another resource: ``GET /v1/blocks/{block_id}/agents`` and
``GET /v1/identities/{identity_id}/agents``,
``GET /v1/archives/{archive_id}/agents`` (they live here because listing agents is the agents domain's job)."""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from memlet.agents.deps import AgentServiceDep
from memlet.agents.list_filters import AgentFilters
from memlet.agents.schemas import AgentRelationship, AgentState
from memlet.agents.views import agent_state, expand_include
from memlet.api.deps import ActorDep
from memlet.api.validators import page_query
from memlet.archives.deps import ArchiveServiceDep
from memlet.blocks.deps import BlockServiceDep
from memlet.db.pagination import Page
from memlet.identities.deps import IdentityServiceDep
from memlet.ids import ArchiveId, BlockId, IdentityId

block_router = APIRouter(prefix="/blocks", tags=["blocks"])
identity_router = APIRouter(prefix="/identities", tags=["identities"])
archive_router = APIRouter(prefix="/archives", tags=["archives"])

OrderQuery = Literal["asc", "desc"]


@block_router.get("/{block_id}/agents", operation_id="list_agents_for_block", response_model=list[AgentState])
async def list_agents_for_block(
    *,
    block_id: BlockId,
    service: BlockServiceDep,
    agents: AgentServiceDep,
    actor: ActorDep,
    page: Annotated[Page, page_query()],
    include_relationships: Annotated[list[str] | None, Query(deprecated=True)] = None,
    include: Annotated[list[AgentRelationship] | None, Query()] = None,
) -> Any:
    """List the agents a block is attached to, newest first by default."""
    rows = await service.agents_page(actor, block_id, page)
    # Letta ignores the legacy `include_relationships` here: only `include` adds relationships.
    wanted = expand_include(include)
    relations = await agents.relations(rows, wanted)
    return [agent_state(a, relations[a.id]) for a in rows]


@identity_router.get(
    "/{identity_id}/agents",
    operation_id="list_agents_for_identity",
    response_model=list[AgentState],
    deprecated=True,
)
async def list_agents_for_identity(
    *,
    identity_id: IdentityId,
    service: IdentityServiceDep,
    agents: AgentServiceDep,
    actor: ActorDep,
    page: Annotated[Page, page_query()],
    include: Annotated[list[AgentRelationship], Query()] = [],  # noqa: B006 (FastAPI copies defaults)
) -> Any:
    """List the agents linked to an identity, newest first by default."""
    await service.check_agents_page(actor, identity_id, page)
    filters = AgentFilters(identity_id=identity_id)
    return await agents.list_page(actor, filters, page, sort_by="created_at", include=expand_include(include))


@archive_router.get("/{archive_id}/agents", operation_id="list_agents_for_archive", response_model=list[AgentState])
async def list_agents_for_archive(
    *,
    archive_id: ArchiveId,
    service: ArchiveServiceDep,
    agents: AgentServiceDep,
    actor: ActorDep,
    page: Annotated[Page, page_query()],
    include: Annotated[list[AgentRelationship] | None, Query()] = None,
) -> Any:
    """List the agents an archive is attached to, newest first by default."""
    rows = await service.agents_page(actor, archive_id, page)
    relations = await agents.relations(rows, expand_include(include))
    return [agent_state(a, relations[a.id]) for a in rows]
