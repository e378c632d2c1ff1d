"""The turn drivers as FastAPI dependencies (typed aliases for routers)."""

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request

from memlet.api.deps import SessionDep, UserIdHeader, get_actor
from memlet.db.engine import single_read
from memlet.loop.runner import LoopDeps
from memlet.turns.agent_messages import AgentMessageService
from memlet.turns.agent_messaging import InProcessMessenger
from memlet.turns.batches import BatchService
from memlet.turns.sending import SendService


async def get_loop_deps(request: Request) -> LoopDeps:
    """The loop's dependencies from the app: the LLM clients and the run worker are set up by `memlet.app.lifespan`.

    Read from the app's state directly (the settings and sessionmaker too), not through sub-dependencies: each
    dependency costs FastAPI more per request than this whole function.
    """
    state = request.app.state
    worker = getattr(state, "run_worker", None)
    deps = LoopDeps(
        sessionmaker=state.sessionmaker,
        settings=state.settings,
        llm_for=state.llm_for,
        turn_engine=getattr(state, "turn_engine", None),
        worker_id=worker.worker_id if worker is not None else None,
        embedder=getattr(state, "embedder", None),
        window_cache=getattr(state, "window_cache", None),
    )
    if worker is not None:  # the multi-agent tools run other agents' turns through the loop's hook
        deps.agent_messenger = InProcessMessenger(deps, worker.turns, getattr(state, "sleeptime_runs", None))
    return deps


LoopDepsDep = Annotated[LoopDeps, Depends(get_loop_deps)]


async def get_send_service(request: Request, user_id: UserIdHeader = None) -> SendService:
    """The send routes' one dependency: the loop's dependencies and the actor are built here, not as dependencies
    of their own (FastAPI's work per dependency was most of what a send cost outside its turn)."""
    state = request.app.state
    deps, actor = await get_loop_deps(request), await get_actor(request, user_id)
    catalog, sleeptime = getattr(state, "catalog", None), getattr(state, "sleeptime_runs", None)
    return SendService(deps, actor, state.run_worker.turns, catalog, sleeptime)


async def get_agent_message_service(
    request: Request, session: SessionDep, user_id: UserIdHeader = None
) -> AgentMessageService:
    """The history routes' service (list messages is a hot one): the actor resolved here, one dependency less."""
    return AgentMessageService(session, await get_actor(request, user_id))


async def get_agent_message_reader(
    request: Request, user_id: UserIdHeader = None
) -> AsyncIterator[AgentMessageService]:
    """The history listing's service on an autocommit session: its statements are reads, each atomic by itself
    (under READ COMMITTED each takes its own snapshot inside a transaction too), so no BEGIN and COMMIT around them."""
    actor = await get_actor(request, user_id)
    async with single_read(request.app.state.sessionmaker) as session:
        yield AgentMessageService(session, actor)


SendServiceDep = Annotated[SendService, Depends(get_send_service)]
AgentMessageReaderDep = Annotated[AgentMessageService, Depends(get_agent_message_reader, scope="function")]


AgentMessageServiceDep = Annotated[AgentMessageService, Depends(get_agent_message_service)]


async def get_batch_service(send: SendServiceDep) -> BatchService:
    return BatchService(send)


BatchServiceDep = Annotated[BatchService, Depends(get_batch_service)]
