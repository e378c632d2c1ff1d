"""``/v1/agents/{agent_id}/core-memory``: an agent's blocks by label, attach and detach, the deprecated memory view."""

from typing import Annotated, Any

from fastapi import APIRouter

from memlet.agents.deps import AgentServiceDep
from memlet.agents.schemas import AgentState
from memlet.api.deps import ActorDep
from memlet.api.validators import page_query
from memlet.blocks.deps import BlockServiceDep
from memlet.blocks.schemas import Block, BlockUpdate, Memory
from memlet.db.pagination import Page
from memlet.ids import AgentId, BlockId

router = APIRouter(prefix="/agents/{agent_id}/core-memory", tags=["agents"])


@router.get("", operation_id="retrieve_agent_memory", response_model=Memory, deprecated=True)
async def retrieve_agent_memory(agent_id: AgentId, service: BlockServiceDep, actor: ActorDep) -> Any:
    """Get the agent's in-context memory (deprecated: list its blocks instead)."""
    return await service.memory(actor, agent_id)


@router.get("/blocks", operation_id="list_core_memory_blocks", response_model=list[Block])
async def list_core_memory_blocks(
    *,
    agent_id: AgentId,
    service: BlockServiceDep,
    actor: ActorDep,
    page: Annotated[Page, page_query(limit=100)],
) -> Any:
    """List the agent's core memory blocks, newest first by default."""
    return await service.list_for_agent(actor, agent_id, page)


@router.get("/blocks/{block_label}", operation_id="retrieve_core_memory_block", response_model=Block)
async def retrieve_core_memory_block(
    agent_id: AgentId, block_label: str, service: BlockServiceDep, actor: ActorDep
) -> Any:
    """Get one of the agent's blocks by its label."""
    return await service.get_by_label(actor, agent_id, block_label)


@router.patch("/blocks/{block_label}", operation_id="modify_core_memory_block", response_model=Block)
async def modify_core_memory_block(
    agent_id: AgentId, block_label: str, body: BlockUpdate, service: BlockServiceDep, actor: ActorDep
) -> Any:
    """Update one of the agent's blocks by its label; other agents sharing the block see the change."""
    return await service.modify_by_label(actor, agent_id, block_label, body)


@router.patch("/blocks/attach/{block_id}", operation_id="attach_core_memory_block", response_model=AgentState)
async def attach_core_memory_block(
    agent_id: AgentId, block_id: BlockId, service: BlockServiceDep, agents: AgentServiceDep, actor: ActorDep
) -> Any:
    """Attach a block to the agent's core memory; returns the agent."""
    await service.attach(actor, agent_id, block_id)
    await agents.blocks_attached(actor, agent_id, [block_id])
    return await agents.get_state(actor, agent_id)


@router.patch("/blocks/detach/{block_id}", operation_id="detach_core_memory_block", response_model=AgentState)
async def detach_core_memory_block(
    agent_id: AgentId, block_id: BlockId, service: BlockServiceDep, agents: AgentServiceDep, actor: ActorDep
) -> Any:
    """Detach a block from the agent's core memory (the block itself is kept); returns the agent."""
    await service.detach(actor, agent_id, block_id)
    return await agents.get_state(actor, agent_id)
