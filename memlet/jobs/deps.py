"""The jobs service as a FastAPI dependency (a typed alias for routers)."""

from typing import Annotated

from fastapi import Depends

from memlet.api.deps import ActorDep, SessionDep
from memlet.jobs.service import JobService


async def get_job_service(session: SessionDep, actor: ActorDep) -> JobService:
    return JobService(session, actor)


JobServiceDep = Annotated[JobService, Depends(get_job_service)]
