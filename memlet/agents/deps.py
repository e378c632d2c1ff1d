"""The agents services as FastAPI dependencies (typed aliases for routers)."""

from typing import Annotated

from fastapi import Depends, Request

from memlet.agents.service import AgentService
from memlet.agents.tool_links import AgentToolService
from memlet.api.deps import SessionDep


async def get_agent_service(request: Request, session: SessionDep) -> AgentService:
    state = request.app.state
    return AgentService(
        session,
        state.catalog,
        getattr(state, "sleeptime_lifecycle", None),
        getattr(state, "managed_groups", None),
    )


AgentServiceDep = Annotated[AgentService, Depends(get_agent_service)]


async def get_agent_tool_service(session: SessionDep) -> AgentToolService:
    return AgentToolService(session)


AgentToolServiceDep = Annotated[AgentToolService, Depends(get_agent_tool_service)]
