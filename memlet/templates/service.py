"""Template deployments: create agents, blocks and groups stamped with a deployment, list a deployment, tear it down.

Creation goes through the agents, blocks and groups services (the public create paths), so a deployed entity is
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
from memlet.db import models as orm
from memlet.groups.repository import GroupRepository
from memlet.groups.schemas import Group, InternalTemplateGroupCreate
from memlet.groups.service import GroupService
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


def block_entity(row: orm.Block) -> DeploymentEntity:
    return DeploymentEntity(
        id=row.id,
        type="block",
        name=row.template_name or row.label,
        description=row.description,
        entity_id=row.entity_id,
        project_id=row.project_id,
    )


def agent_entity(row: orm.Agent) -> DeploymentEntity:
    return DeploymentEntity(
        id=row.id,
        type="agent",
        name=row.name,
        description=row.description,
        entity_id=row.entity_id,
        project_id=row.project_id,
    )


def group_entity(row: orm.Group) -> DeploymentEntity:
    # A group has neither a name nor an entity id.
    return DeploymentEntity(id=row.id, type="group", description=row.description, project_id=row.project_id)


class DeploymentService:
    def __init__(
        self,
        session: AsyncSession,
        agents: AgentService,
        blocks: BlockService,
        groups: GroupService,
    ) -> None:
        self.agents = agents
        self.blocks = blocks
        self.groups = groups
        self.agent_rows = AgentRepository(session)
        self.block_rows = BlockRepository(session)
        self.group_rows = GroupRepository(session)

    async def create_agent(self, actor: Actor, req: InternalTemplateAgentCreate) -> AgentState:
        """Create the agent; as in Letta, tools this server lacks are left out instead of failing the deploy (the
        template's folders are attached with their files, as for every new agent)."""
        return await self.agents.create(actor, req, ignore_missing_tools=True)

    async def create_blocks(self, actor: Actor, specs: Sequence[InternalTemplateBlockCreate]) -> list[Block]:
        """Create the blocks in order, all or none (one transaction)."""
        return [await self.blocks.create(actor, spec) for spec in specs]

    async def create_group(self, spec: InternalTemplateGroupCreate) -> Group:
        return await self.groups.create(spec)

    async def entities(
        self, actor: Actor, deployment_id: str, entity_types: Sequence[str] | None
    ) -> ListDeploymentEntitiesResponse:
        """The deployment's blocks, then its agents, then its groups; an unknown deployment has none."""
        types = wanted_types(entity_types)
        org = actor.organization_id
        found: list[DeploymentEntity] = []
        if "block" in types:
            found += [block_entity(b) for b in await self.block_rows.in_deployment(org, deployment_id)]
        if "agent" in types:
            found += [agent_entity(a) for a in await self.agent_rows.in_deployment(org, deployment_id)]
        if "group" in types:
            found += [group_entity(g) for g in await self.group_rows.in_deployment(org, deployment_id)]
        message = f"Found {len(found)} entities for deployment {deployment_id}"
        if entity_types:
            message += f" (filtered by types: {', '.join(types)})"
        return ListDeploymentEntitiesResponse(
            entities=found, total_count=len(found), deployment_id=deployment_id, message=message
        )

    async def delete(self, actor: Actor, deployment_id: str) -> DeleteDeploymentResponse:
        """Delete every group, agent and block of the deployment; other deployments and unstamped rows stay.

        Letta deletes blocks, then agents, then groups; here groups go first because a group's manager agent cannot
        be deleted while the group exists, and blocks last, so a block's deletion rebuilds only the prompts of
        agents that outlive the deployment. An agent still managing a group of another deployment is left in
        place, as Letta leaves an agent whose deletion fails.
        """
        org = actor.organization_id
        group_ids = [g.id for g in await self.group_rows.in_deployment(org, deployment_id)]
        for group_id in group_ids:
            await self.groups.delete(group_id)
        agent_ids = []
        for agent in await self.agent_rows.in_deployment(org, deployment_id):
            if not await self.group_rows.managed_by(agent.id):
                await self.agents.delete(actor, agent.id)
                agent_ids.append(agent.id)
        block_ids = [b.id for b in await self.block_rows.in_deployment(org, deployment_id)]
        for block_id in block_ids:
            await self.blocks.delete(actor, block_id)
        total = len(group_ids) + len(agent_ids) + len(block_ids)
        return DeleteDeploymentResponse(
            deleted_blocks=block_ids,
            deleted_agents=agent_ids,
            deleted_groups=group_ids,
            message=f"Successfully deleted {total} entities from deployment {deployment_id}",
        )
