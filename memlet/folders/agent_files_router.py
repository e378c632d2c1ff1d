"""`/v1/agents/{agent_id}/files`: the files an agent sees, and opening and closing them."""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse

from memlet.api.deps import ActorDep, SessionDep
from memlet.api.validators import PageLimit
from memlet.db.pagination import Page
from memlet.folders.agent_files_service import AgentFileService
from memlet.folders.file_router import FileIdParam
from memlet.folders.file_schemas import PaginatedAgentFiles
from memlet.ids import AgentId

router = APIRouter(prefix="/agents", tags=["agents"])


async def get_agent_file_service(request: Request, session: SessionDep) -> AgentFileService:
    return AgentFileService(session, request.app.state.rebuild_prompts)


AgentFileServiceDep = Annotated[AgentFileService, Depends(get_agent_file_service)]


@router.get("/{agent_id}/files", operation_id="list_files_for_agent", response_model=PaginatedAgentFiles)
async def list_files_for_agent(
    agent_id: AgentId,
    service: AgentFileServiceDep,
    actor: ActorDep,
    before: str | None = None,
    after: str | None = None,
    limit: PageLimit = 100,
    order: Literal["asc", "desc"] = "desc",
    order_by: Literal["created_at"] = "created_at",
    cursor: Annotated[str | None, Query(deprecated=True)] = None,
    is_open: bool | None = None,
) -> Any:
    """The files attached to an agent with their open or closed state, newest first by default."""
    page = Page(before=before, after=after or cursor, limit=limit, order=order)
    return await service.list_page(actor, agent_id, page, is_open=is_open)


@router.patch("/{agent_id}/files/close-all", operation_id="close_all_files_for_agent", response_model=list[str])
async def close_all_files_for_agent(agent_id: AgentId, service: AgentFileServiceDep, actor: ActorDep) -> Any:
    """Close every open file of an agent; returns the names closed."""
    return await service.close_all(actor, agent_id)


@router.patch("/{agent_id}/files/{file_id}/open", operation_id="open_file_for_agent", response_model=list[str])
async def open_file_for_agent(
    agent_id: AgentId, file_id: FileIdParam, service: AgentFileServiceDep, actor: ActorDep
) -> Any:
    """Open a file in the agent's context; returns the names of files closed to stay under max_files_open."""
    return await service.open(actor, agent_id, file_id)


@router.patch("/{agent_id}/files/{file_id}/close", operation_id="close_file_for_agent")
async def close_file_for_agent(
    agent_id: AgentId, file_id: FileIdParam, service: AgentFileServiceDep, actor: ActorDep
) -> JSONResponse:
    """Close a file in the agent's context."""
    await service.close(actor, agent_id, file_id)
    return JSONResponse({"message": f"File id={file_id} successfully closed"})
