"""The groups service as a FastAPI dependency (a typed alias for routers)."""

from typing import Annotated

from fastapi import Depends

from memlet.api.deps import ActorDep, SessionDep
from memlet.groups.service import GroupService


async def get_group_service(session: SessionDep, actor: ActorDep) -> GroupService:
    return GroupService(session, actor)


GroupServiceDep = Annotated[GroupService, Depends(get_group_service)]
