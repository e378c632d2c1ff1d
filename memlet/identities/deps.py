"""The identities services as FastAPI dependencies (typed aliases for routers)."""

from typing import Annotated

from fastapi import Depends

from memlet.api.deps import SessionDep
from memlet.identities.service import IdentityService


async def get_identity_service(session: SessionDep) -> IdentityService:
    return IdentityService(session)


IdentityServiceDep = Annotated[IdentityService, Depends(get_identity_service)]
