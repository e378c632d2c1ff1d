"""`/v1/agents/{agent_id}/folders` (list, attach, detach) and the deprecated `/v1/agents/{agent_id}/sources` twins.

Each twin pair is served by one handler; the twins differ in operationId, the folder id's path parameter name
(`folder_id` or `source_id`) and the reply: attach and detach answer `null` to letta-client 1.x and the updated
AgentState to older clients, as Letta 0.16.8 does; the deprecated source routes always answer the AgentState.
"""

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Request

from memlet.actor import Actor
from memlet.agents.replies import agent_reply, agent_state_reply
from memlet.agents.schemas import AgentState
from memlet.api.deps import ActorDep, SessionDep
from memlet.api.routing import add_route
from memlet.api.validators import PageLimit
from memlet.db.pagination import Page
from memlet.folders.deps import FolderServiceDep
from memlet.folders.router import folder_path
from memlet.folders.schemas import Source
from memlet.ids import AgentId

router = APIRouter(prefix="/agents", tags=["agents"])
Reply = Callable[[Request, SessionDep, Actor, str], Awaitable[AgentState | None]]


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
    return await service.of_agent_page(actor, agent_id, Page(before=before, after=after, limit=limit, order=order))


def _membership_handler(action: Literal["attach", "detach"], id_name: str, reply: Reply) -> Callable[..., Any]:
    """The attach or detach handler for a folder id named `id_name` on the wire."""
    FolderIdParam = Annotated[str, folder_path(id_name)]

    async def handler(
        agent_id: AgentId,
        folder_id: FolderIdParam,
        service: FolderServiceDep,
        request: Request,
        session: SessionDep,
        actor: ActorDep,
    ) -> Any:
        change = service.attach if action == "attach" else service.detach
        await change(actor, agent_id, folder_id)
        return await reply(request, session, actor, agent_id)

    return handler


add_route(
    router,
    "GET",
    "/{agent_id}/folders",
    list_folders_for_agent,
    "list_folders_for_agent",
    "List the folders attached to an agent, newest first by default.",
    response_model=list[Source],
)
add_route(
    router,
    "GET",
    "/{agent_id}/sources",
    list_folders_for_agent,
    "list_agent_sources",
    "Deprecated: list the folders (sources) attached to an agent.",
    response_model=list[Source],
    deprecated=True,
)
add_route(
    router,
    "PATCH",
    "/{agent_id}/folders/attach/{folder_id}",
    _membership_handler("attach", "folder_id", agent_reply),
    "attach_folder_to_agent",
    "Attach a folder: its files become file blocks and the agent gets the file tools.",
    response_model=AgentState | None,
)
add_route(
    router,
    "PATCH",
    "/{agent_id}/folders/detach/{folder_id}",
    _membership_handler("detach", "folder_id", agent_reply),
    "detach_folder_from_agent",
    "Detach a folder: its file blocks go, and the file tools once no folder is left.",
    response_model=AgentState | None,
)
add_route(
    router,
    "PATCH",
    "/{agent_id}/sources/attach/{source_id}",
    _membership_handler("attach", "source_id", agent_state_reply),
    "attach_source_to_agent",
    "Deprecated: attach a folder (source) to an agent.",
    response_model=AgentState,
    deprecated=True,
)
add_route(
    router,
    "PATCH",
    "/{agent_id}/sources/detach/{source_id}",
    _membership_handler("detach", "source_id", agent_state_reply),
    "detach_source_from_agent",
    "Deprecated: detach a folder (source) from an agent.",
    response_model=AgentState,
    deprecated=True,
)
