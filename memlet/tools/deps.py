"""The tools services as FastAPI dependencies (typed aliases for routers)."""

from typing import Annotated

from fastapi import Depends

from memlet.api.deps import SessionDep
from memlet.tools.service import ToolService


async def get_tool_service(session: SessionDep) -> ToolService:
    return ToolService(session)


ToolServiceDep = Annotated[ToolService, Depends(get_tool_service)]
