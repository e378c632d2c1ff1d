"""The runs and steps services as FastAPI dependencies (typed aliases for routers)."""

from typing import Annotated

from fastapi import Depends

from memlet.api.deps import ActorDep, SessionDep
from memlet.runs.service import RunService, StepService


async def get_run_service(session: SessionDep, actor: ActorDep) -> RunService:
    return RunService(session, actor)


RunServiceDep = Annotated[RunService, Depends(get_run_service)]


async def get_step_service(session: SessionDep, actor: ActorDep) -> StepService:
    return StepService(session, actor)


StepServiceDep = Annotated[StepService, Depends(get_step_service)]
