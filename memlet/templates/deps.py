"""The deployment service as a FastAPI dependency."""

from typing import Annotated

from fastapi import Depends

from memlet.agents.deps import AgentServiceDep
from memlet.api.deps import SessionDep
from memlet.blocks.deps import BlockServiceDep
from memlet.groups.deps import GroupServiceDep
from memlet.templates.service import DeploymentService


async def get_deployment_service(
    session: SessionDep,
    agents: AgentServiceDep,
    blocks: BlockServiceDep,
    groups: GroupServiceDep,
) -> DeploymentService:
    return DeploymentService(session, agents, blocks, groups)


DeploymentServiceDep = Annotated[DeploymentService, Depends(get_deployment_service)]
