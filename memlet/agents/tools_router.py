"""``/v1/agents/{agent_id}/tools``: list, attach, detach and the approval requirement of a tool
(running one is `turns/tool_router.py`).

Attach, detach and approval answer ``null`` to letta-client 1.x and the full AgentState to older clients, as
Letta 0.16.8 does (SPEC "SDK-version sniffing").
"""

from collections.abc import Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from memlet.agents.deps import AgentToolServiceDep
from memlet.agents.replies import agent_reply
from memlet.agents.schemas import AgentState
from memlet.api.deps import ActorDep, SessionDep
from memlet.api.routing import add_route
from memlet.api.validators import page_query
from memlet.db.pagination import Page
from memlet.errors import UnprocessableError
from memlet.ids import AgentId, ToolId
from memlet.tools.schemas import Tool

router = APIRouter(prefix="/agents", tags=["tools"])


class ModifyApprovalRequest(BaseModel):
    """Body of ``PATCH /v1/agents/{agent_id}/tools/approval/{tool_name}``."""

    model_config = ConfigDict(extra="forbid")

    requires_approval: bool = Field(..., description="Whether the tool requires approval before execution")


@router.get("/{agent_id}/tools", operation_id="list_tools_for_agent", response_model=list[Tool])
async def list_tools_for_agent(
    *,
    agent_id: AgentId,
    service: AgentToolServiceDep,
    actor: ActorDep,
    page: Annotated[Page, page_query(limit=10)],
) -> Any:
    """List the tools attached to an agent, newest first by default."""
    return await service.list_tools(actor, agent_id, page)


def _link_handler(action: Literal["attach", "detach"]) -> Callable[..., Any]:
    """The handler that attaches a tool to an agent or detaches it."""

    async def handler(
        tool_id: ToolId,
        agent_id: AgentId,
        request: Request,
        session: SessionDep,
        service: AgentToolServiceDep,
        actor: ActorDep,
    ) -> Any:
        change = service.attach if action == "attach" else service.detach
        await change(actor, agent_id, tool_id)
        return await agent_reply(request, session, actor, agent_id)

    return handler


add_route(
    router,
    "PATCH",
    "/{agent_id}/tools/attach/{tool_id}",
    _link_handler("attach"),
    "attach_tool_to_agent",
    "Attach a tool to an agent.",
    response_model=AgentState | None,
)
add_route(
    router,
    "PATCH",
    "/{agent_id}/tools/detach/{tool_id}",
    _link_handler("detach"),
    "detach_tool_from_agent",
    "Detach a tool from an agent.",
    response_model=AgentState | None,
)


@router.patch(
    "/{agent_id}/tools/approval/{tool_name}", operation_id="modify_approval_for_tool", response_model=AgentState | None
)
async def modify_approval_for_tool(
    tool_name: str,
    agent_id: AgentId,
    request: Request,
    session: SessionDep,
    service: AgentToolServiceDep,
    actor: ActorDep,
    requires_approval: Annotated[bool | None, Query(deprecated=True)] = None,
    body: Annotated[ModifyApprovalRequest | None, Body()] = None,
) -> Any:
    """Require (or stop requiring) human approval before the agent calls this tool."""
    value = body.requires_approval if body is not None else requires_approval
    if value is None:
        raise UnprocessableError("requires_approval must be provided either in request body or as query parameter")
    await service.set_approval(actor, agent_id, tool_name, value)
    return await agent_reply(request, session, actor, agent_id)
