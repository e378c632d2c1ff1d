"""``/v1/identities`` (CRUD, upsert, properties, linked agents and blocks) and the identity attach/detach routes
under ``/v1/agents/{agent_id}/identities`` and ``/v1/blocks/{block_id}/identities``."""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Header, Query

from memlet.api.deps import ActorDep
from memlet.api.validators import page_query
from memlet.blocks.schemas import Block
from memlet.db.pagination import Page
from memlet.identities.deps import IdentityServiceDep
from memlet.identities.repository import IdentityFilters
from memlet.identities.schemas import (
    Identity,
    IdentityCreate,
    IdentityProperty,
    IdentityType,
    IdentityUpdate,
    IdentityUpsert,
)
from memlet.ids import AgentId, BlockId, IdentityId

router = APIRouter(prefix="/identities", tags=["identities"])
agent_router = APIRouter(prefix="/agents", tags=["agents"])
block_router = APIRouter(prefix="/blocks", tags=["blocks"])


# Letta reads the project slug from this header in its cloud proxy only; accepted and ignored here.
ProjectHeader = Annotated[str | None, Header(alias="X-Project")]
OrderQuery = Literal["asc", "desc"]


@router.get("/", operation_id="list_identities", response_model=list[Identity], deprecated=True)
async def list_identities(
    *,
    service: IdentityServiceDep,
    actor: ActorDep,
    name: str | None = None,
    project_id: Annotated[str | None, Query(deprecated=True)] = None,
    identifier_key: str | None = None,
    identity_type: IdentityType | None = None,
    page: Annotated[Page, page_query()],
) -> Any:
    """List identities, newest first by default, filtered by name, project, key or type."""
    filters = IdentityFilters(
        name=name, project_id=project_id, identifier_key=identifier_key, identity_type=identity_type
    )
    return await service.list_page(actor, filters, page)


@router.post("/", operation_id="create_identity", response_model=Identity, deprecated=True)
async def create_identity(
    body: IdentityCreate, service: IdentityServiceDep, actor: ActorDep, x_project: ProjectHeader = None
) -> Any:
    """Create an identity; its identifier key must be unique within its project."""
    return await service.create(actor, body)


@router.put("/", operation_id="upsert_identity", response_model=Identity, deprecated=True)
async def upsert_identity(
    body: IdentityUpsert, service: IdentityServiceDep, actor: ActorDep, x_project: ProjectHeader = None
) -> Any:
    """Create an identity, or replace the one with the same identifier key and project."""
    return await service.upsert(actor, body)


@router.get("/count", operation_id="count_identities", response_model=int, deprecated=True)
async def count_identities(service: IdentityServiceDep, actor: ActorDep) -> Any:
    """Count the identities of the organization."""
    return await service.count(actor)


@router.get("/{identity_id}", operation_id="retrieve_identity", response_model=Identity, deprecated=True)
async def retrieve_identity(identity_id: IdentityId, service: IdentityServiceDep, actor: ActorDep) -> Any:
    """Get an identity by id."""
    return await service.get(actor, identity_id)


@router.patch("/{identity_id}", operation_id="update_identity", response_model=Identity, deprecated=True)
async def update_identity(
    identity_id: IdentityId, body: IdentityUpdate, service: IdentityServiceDep, actor: ActorDep
) -> Any:
    """Update an identity: properties merge by key, listed agents and blocks are added."""
    return await service.update(actor, identity_id, body)


@router.delete("/{identity_id}", operation_id="delete_identity", deprecated=True)
async def delete_identity(identity_id: IdentityId, service: IdentityServiceDep, actor: ActorDep) -> None:
    """Delete an identity; its agents and blocks remain."""
    await service.delete(actor, identity_id)


@router.put("/{identity_id}/properties", operation_id="upsert_properties_for_identity", deprecated=True)
async def upsert_properties_for_identity(
    identity_id: IdentityId,
    properties: Annotated[list[IdentityProperty], Body()],
    service: IdentityServiceDep,
    actor: ActorDep,
) -> Any:
    """Replace an identity's property list and return the identity."""
    return await service.replace_properties(actor, identity_id, properties)


@router.get(
    "/{identity_id}/blocks",
    operation_id="list_blocks_for_identity",
    response_model=list[Block],
    deprecated=True,
)
async def list_blocks_for_identity(
    *,
    identity_id: IdentityId,
    service: IdentityServiceDep,
    actor: ActorDep,
    page: Annotated[Page, page_query()],
) -> Any:
    """List the blocks linked to an identity, newest first by default."""
    return await service.blocks_page(actor, identity_id, page)


@agent_router.patch("/{agent_id}/identities/attach/{identity_id}", operation_id="attach_identity_to_agent")
async def attach_identity_to_agent(
    identity_id: str, agent_id: AgentId, service: IdentityServiceDep, actor: ActorDep
) -> None:
    """Attach an identity to an agent."""
    await service.attach_agent(actor, identity_id, agent_id)


@agent_router.patch("/{agent_id}/identities/detach/{identity_id}", operation_id="detach_identity_from_agent")
async def detach_identity_from_agent(
    identity_id: str, agent_id: AgentId, service: IdentityServiceDep, actor: ActorDep
) -> None:
    """Detach an identity from an agent."""
    await service.detach_agent(actor, identity_id, agent_id)


@block_router.patch(
    "/{block_id}/identities/attach/{identity_id}", operation_id="attach_identity_to_block", response_model=Block
)
async def attach_identity_to_block(
    identity_id: str, block_id: BlockId, service: IdentityServiceDep, actor: ActorDep
) -> Any:
    """Attach an identity to a block and return the block."""
    return await service.attach_block(actor, identity_id, block_id)


@block_router.patch(
    "/{block_id}/identities/detach/{identity_id}", operation_id="detach_identity_from_block", response_model=Block
)
async def detach_identity_from_block(
    identity_id: str, block_id: BlockId, service: IdentityServiceDep, actor: ActorDep
) -> Any:
    """Detach an identity from a block and return the block."""
    return await service.detach_block(actor, identity_id, block_id)
