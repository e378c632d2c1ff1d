"""The agents services as FastAPI dependencies (typed aliases for routers)."""

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request

from memlet.agents.service import AgentService
from memlet.agents.tool_links import AgentToolService
from memlet.api.deps import SessionDep
from memlet.db.engine import single_read


async def get_agent_service(request: Request, session: SessionDep) -> AgentService:
    state = request.app.state
    return AgentService(
        session,
        state.catalog,
        getattr(state, "sleeptime_lifecycle", None),
        getattr(state, "managed_groups", None),
    )


AgentServiceDep = Annotated[AgentService, Depends(get_agent_service)]


async def get_agent_reader(request: Request) -> AsyncIterator[AgentService]:
    """An `AgentService` for reads only (the list), on an autocommit session: no BEGIN and COMMIT round trips around
    its three SELECTs. Under READ COMMITTED each statement takes its own snapshot inside a transaction too, so the
    page is no less consistent."""
    state = request.app.state
    async with single_read(state.sessionmaker) as session:
        yield AgentService(
            session, state.catalog, getattr(state, "sleeptime_lifecycle", None), getattr(state, "managed_groups", None)
        )


AgentReaderDep = Annotated[AgentService, Depends(get_agent_reader, scope="function")]


async def get_agent_tool_service(session: SessionDep) -> AgentToolService:
    return AgentToolService(session)


AgentToolServiceDep = Annotated[AgentToolService, Depends(get_agent_tool_service)]
