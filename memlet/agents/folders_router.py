"""`/v1/agents/{agent_id}/folders` (list, attach, detach) and the deprecated `/v1/agents/{agent_id}/sources` twins.

Attach and detach answer `null` to letta-client 1.x and the updated AgentState to older clients, as Letta 0.16.8
does; the deprecated source routes always answer the AgentState.
"""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Request

from memlet.agents.deps import get_agent_service
from memlet.agents.schemas import AgentState
from memlet.api.clients import is_sdk_v1
from memlet.api.deps import ActorDep, SessionDep
from memlet.api.validators import PageLimit
from memlet.db.pagination import Page
from memlet.folders.deps import FolderServiceDep
from memlet.folders.router import folder_path
from memlet.folders.schemas import Source
from memlet.ids import AgentId

router = APIRouter(prefix="/agents", tags=["agents"])
FolderIdParam = Annotated[str, folder_path("folder_id")]
SourceIdParam = Annotated[str, folder_path("source_id")]


async def _agent_state(request: Request, session: SessionDep, actor: ActorDep, agent_id: str) -> AgentState:
    return await (await get_agent_service(request, session)).get_state(actor, agent_id)


async def _reply(request: Request, session: SessionDep, actor: ActorDep, agent_id: str) -> AgentState | None:
    return None if is_sdk_v1(request) else await _agent_state(request, session, actor, agent_id)


async def _list(service: FolderServiceDep, actor: ActorDep, agent_id: str, page: Page) -> list[Any]:
    return await service.of_agent_page(actor, agent_id, page)


@router.get("/{agent_id}/folders", operation_id="list_folders_for_agent", response_model=list[Source])
async def list_folders_for_agent(
    agent_id: AgentId,
    service: FolderServiceDep,
    actor: ActorDep,
    before: str | None = None,
    after: str | None = None,
    limit: PageLimit = 100,
    order: Literal["asc", "desc"] = "desc",
    order_by: Literal["created_at"] = "created_at",
) -> Any:
    """List the folders attached to an agent, newest first by default."""
    return await _list(service, actor, agent_id, Page(before=before, after=after, limit=limit, order=order))


@router.get("/{agent_id}/sources", operation_id="list_agent_sources", response_model=list[Source], deprecated=True)
async def list_agent_sources(
    agent_id: AgentId,
    service: FolderServiceDep,
    actor: ActorDep,
    before: str | None = None,
    after: str | None = None,
    limit: PageLimit = 100,
    order: Literal["asc", "desc"] = "desc",
    order_by: Literal["created_at"] = "created_at",
) -> Any:
    """Deprecated: list the folders (sources) attached to an agent."""
    return await _list(service, actor, agent_id, Page(before=before, after=after, limit=limit, order=order))


@router.patch(
    "/{agent_id}/folders/attach/{folder_id}", operation_id="attach_folder_to_agent", response_model=AgentState | None
)
async def attach_folder_to_agent(
    agent_id: AgentId,
    folder_id: FolderIdParam,
    service: FolderServiceDep,
    request: Request,
    session: SessionDep,
    actor: ActorDep,
) -> Any:
    """Attach a folder: its files become file blocks and the agent gets the file tools."""
    await service.attach(actor, agent_id, folder_id)
    return await _reply(request, session, actor, agent_id)


@router.patch(
    "/{agent_id}/folders/detach/{folder_id}", operation_id="detach_folder_from_agent", response_model=AgentState | None
)
async def detach_folder_from_agent(
    agent_id: AgentId,
    folder_id: FolderIdParam,
    service: FolderServiceDep,
    request: Request,
    session: SessionDep,
    actor: ActorDep,
) -> Any:
    """Detach a folder: its file blocks go, and the file tools once no folder is left."""
    await service.detach(actor, agent_id, folder_id)
    return await _reply(request, session, actor, agent_id)


@router.patch(
    "/{agent_id}/sources/attach/{source_id}",
    operation_id="attach_source_to_agent",
    response_model=AgentState,
    deprecated=True,
)
async def attach_source_to_agent(
    agent_id: AgentId,
    source_id: SourceIdParam,
    service: FolderServiceDep,
    request: Request,
    session: SessionDep,
    actor: ActorDep,
) -> Any:
    """Deprecated: attach a folder (source) to an agent."""
    await service.attach(actor, agent_id, source_id)
    return await _agent_state(request, session, actor, agent_id)


@router.patch(
    "/{agent_id}/sources/detach/{source_id}",
    operation_id="detach_source_from_agent",
    response_model=AgentState,
    deprecated=True,
)
async def detach_source_from_agent(
    agent_id: AgentId,
    source_id: SourceIdParam,
    service: FolderServiceDep,
    request: Request,
    session: SessionDep,
    actor: ActorDep,
) -> Any:
    """Deprecated: detach a folder (source) from an agent."""
    await service.detach(actor, agent_id, source_id)
    return await _agent_state(request, session, actor, agent_id)
