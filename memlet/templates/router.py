"""Letta's ``/v1/_internal_templates``: deploy template agents, blocks and groups, list a deployment, delete it."""

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query

from memlet.agents.schemas import AgentState, InternalTemplateAgentCreate
from memlet.api.deps import ActorDep
from memlet.blocks.schemas import Block
from memlet.groups.schemas import Group, InternalTemplateGroupCreate
from memlet.templates.deps import DeploymentServiceDep
from memlet.templates.schemas import (
    DeleteDeploymentResponse,
    InternalTemplateBlockCreate,
    ListDeploymentEntitiesResponse,
)

router = APIRouter(prefix="/_internal_templates", tags=["_internal_templates"])

EntityTypesQuery = Annotated[list[str] | None, Query(description="Filter by entity types (block, agent, group)")]


@router.post("/groups", operation_id="create_internal_template_group", response_model=Group)
async def create_internal_template_group(body: InternalTemplateGroupCreate, service: DeploymentServiceDep) -> Any:
    """Create a multi-agent group from a template, stamped with its template and deployment ids."""
    return await service.create_group(body)


@router.post("/agents", operation_id="create_internal_template_agent", response_model=AgentState)
async def create_internal_template_agent(
    body: InternalTemplateAgentCreate, service: DeploymentServiceDep, actor: ActorDep
) -> Any:
    """Create an agent from a template, stamped with its template, deployment and entity ids."""
    return await service.create_agent(actor, body)


@router.post("/blocks", operation_id="create_internal_template_block", response_model=Block)
async def create_internal_template_block(
    body: InternalTemplateBlockCreate, service: DeploymentServiceDep, actor: ActorDep
) -> Any:
    """Create a block from a template, stamped with its template, deployment and entity ids."""
    (block,) = await service.create_blocks(actor, [body])
    return block


@router.post("/blocks/batch", operation_id="create_internal_template_blocks_batch", response_model=list[Block])
async def create_internal_template_blocks_batch(
    blocks: Annotated[list[InternalTemplateBlockCreate], Body()], service: DeploymentServiceDep, actor: ActorDep
) -> Any:
    """Create several template blocks at once, in the order given."""
    return await service.create_blocks(actor, blocks)


@router.get(
    "/deployment/{deployment_id}",
    operation_id="list_deployment_entities",
    response_model=ListDeploymentEntitiesResponse,
)
async def list_deployment_entities(
    deployment_id: str, service: DeploymentServiceDep, actor: ActorDep, entity_types: EntityTypesQuery = None
) -> Any:
    """List the blocks, agents and groups of a deployment, optionally only some entity types."""
    return await service.entities(actor, deployment_id, entity_types)


@router.delete("/deployment/{deployment_id}", operation_id="delete_deployment", response_model=DeleteDeploymentResponse)
async def delete_deployment(deployment_id: str, service: DeploymentServiceDep, actor: ActorDep) -> Any:
    """Delete every block, agent and group of a deployment."""
    return await service.delete(actor, deployment_id)
