"""Template deployments: create agents and blocks stamped with a deployment, list a deployment, tear it down.

Creation goes through the agents and blocks services (the public create paths), so a deployed agent or block is
built exactly like any other; only the template, deployment and entity ids are added. Letta's cloud deploys a
template as many such calls, then lists or deletes everything by its deployment id.
"""

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.actor import Actor
from memlet.agents.repository import AgentRepository
from memlet.agents.schemas import AgentState, InternalTemplateAgentCreate
from memlet.agents.service import AgentService
from memlet.blocks.repository import BlockRepository
from memlet.blocks.schemas import Block
from memlet.blocks.service import BlockService
from memlet.templates.schemas import (
    DeleteDeploymentResponse,
    DeploymentEntity,
    InternalTemplateBlockCreate,
    ListDeploymentEntitiesResponse,
)

ENTITY_TYPES = ("block", "agent", "group")


def wanted_types(requested: Sequence[str] | None) -> tuple[str, ...]:
    """Letta's reading of ``entity_types``: a single comma-separated item is split, case is ignored, unknown types
    are dropped, and no known type at all means every type."""
    if not requested:
        return ENTITY_TYPES
    if len(requested) == 1 and "," in requested[0]:
        requested = [t.strip() for t in requested[0].split(",")]
    asked = {t.lower() for t in requested}
    return tuple(t for t in ENTITY_TYPES if t in asked) or ENTITY_TYPES


class DeploymentService:
    def __init__(self, session: AsyncSession, agents: AgentService, blocks: BlockService) -> None:
        self.agents = agents
        self.blocks = blocks
        self.agent_rows = AgentRepository(session)
        self.block_rows = BlockRepository(session)

    async def create_agent(self, actor: Actor, req: InternalTemplateAgentCreate) -> AgentState:
        # As in Letta, a template may name tools this server lacks: they are left out instead of failing the deploy.
        return await self.agents.create(actor, req, ignore_missing_tools=True)

    async def create_blocks(self, actor: Actor, specs: Sequence[InternalTemplateBlockCreate]) -> list[Block]:
        """Create the blocks in order, all or none (one transaction)."""
        return [await self.blocks.create(actor, spec) for spec in specs]

    async def entities(
        self, actor: Actor, deployment_id: str, entity_types: Sequence[str] | None
    ) -> ListDeploymentEntitiesResponse:
        """The deployment's blocks, then its agents, then its groups; an unknown deployment has none."""
        types = wanted_types(entity_types)
        org = actor.organization_id
        found: list[DeploymentEntity] = []
        if "block" in types:
            found += [
                DeploymentEntity(
                    id=b.id,
                    type="block",
                    name=b.template_name or b.label,
                    description=b.description,
                    entity_id=b.entity_id,
                    project_id=b.project_id,
                )
                for b in await self.block_rows.in_deployment(org, deployment_id)
            ]
        if "agent" in types:
            found += [
                DeploymentEntity(
                    id=a.id,
                    type="agent",
                    name=a.name,
                    description=a.description,
                    entity_id=a.entity_id,
                    project_id=a.project_id,
                )
                for a in await self.agent_rows.in_deployment(org, deployment_id)
            ]
        message = f"Found {len(found)} entities for deployment {deployment_id}"
        if entity_types:
            message += f" (filtered by types: {', '.join(types)})"
        return ListDeploymentEntitiesResponse(
            entities=found, total_count=len(found), deployment_id=deployment_id, message=message
        )

    async def delete(self, actor: Actor, deployment_id: str) -> DeleteDeploymentResponse:
        """Delete every agent and block of the deployment; other deployments and unstamped rows are untouched.

        Agents go before blocks, so deleting a block rebuilds only the prompts of agents that outlive the deployment.
        """
        org = actor.organization_id
        agent_ids = [a.id for a in await self.agent_rows.in_deployment(org, deployment_id)]
        for agent_id in agent_ids:
            await self.agents.delete(actor, agent_id)
        block_ids = [b.id for b in await self.block_rows.in_deployment(org, deployment_id)]
        for block_id in block_ids:
            await self.blocks.delete(actor, block_id)
        total = len(agent_ids) + len(block_ids)
        return DeleteDeploymentResponse(
            deleted_blocks=block_ids,
            deleted_agents=agent_ids,
            message=f"Successfully deleted {total} entities from deployment {deployment_id}",
        )
