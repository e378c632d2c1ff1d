"""Letta's ``/v1/_internal_agents`` and ``GET /v1/_internal_blocks/{block_id}/agents``.

They are the public routes under internal paths (Letta's cloud calls them); the handlers are the public ones,
except the count, which by default leaves hidden agents out."""

from typing import Annotated, Any

from fastapi import APIRouter, Query

from memlet.agents.blocks_router import modify_core_memory_block
from memlet.agents.deps import AgentServiceDep
from memlet.agents.list_filters import AgentFilters
from memlet.agents.lookup_router import list_agents_for_block
from memlet.agents.schemas import AgentState
from memlet.api.deps import ActorDep
from memlet.blocks.schemas import Block

router = APIRouter(prefix="/_internal_agents", tags=["_internal_agents"])
block_router = APIRouter(prefix="/_internal_blocks", tags=["_internal_blocks"])

_EXCLUDE_HIDDEN = "If True, excludes hidden agents from the count. If False, includes all agents."


@router.get("/count", operation_id="count_internal_agents", response_model=int)
async def count_internal_agents(
    service: AgentServiceDep,
    actor: ActorDep,
    exclude_hidden: Annotated[bool, Query(description=_EXCLUDE_HIDDEN)] = True,
) -> Any:
    """Count the caller's agents, without the hidden ones unless ``exclude_hidden`` is false."""
    return await service.count(actor, AgentFilters(exclude_hidden=exclude_hidden))


router.add_api_route(
    "/{agent_id}/core-memory/blocks/{block_label}",
    modify_core_memory_block,
    methods=["PATCH"],
    operation_id="modify_internal_core_memory_block",
    response_model=Block,
    summary="Modify Internal Core Memory Block",
)

block_router.add_api_route(
    "/{block_id}/agents",
    list_agents_for_block,
    methods=["GET"],
    operation_id="list_agents_for_internal_block",
    response_model=list[AgentState],
    summary="List Agents For Internal Block",
)
