"""`/v1/mcp-servers`: MCP servers by id (Letta 0.16.8's new API)."""

from typing import Any

from fastapi import APIRouter, Body, Request, Response
from fastapi.responses import StreamingResponse

from memlet.api.deps import ActorDep, SessionmakerDep
from memlet.mcp import connection
from memlet.mcp.client import MCPError
from memlet.mcp.deps import MCPServiceDep
from memlet.mcp.oauth import ConnectRequest, connect_events, event, redirect_uri
from memlet.mcp.schemas import (
    CreateMCPServerRequest,
    MCPServerOut,
    MCPToolExecuteRequest,
    ToolExecutionResult,
    UpdateMCPServerRequest,
)
from memlet.mcp.views import server_out
from memlet.tools.schemas import Tool

router = APIRouter(prefix="/mcp-servers", tags=["mcp-servers"])


@router.post("/", operation_id="mcp_create_mcp_server", response_model=MCPServerOut)
async def create_mcp_server(req: CreateMCPServerRequest, actor: ActorDep, service: MCPServiceDep) -> Any:
    row = await service.create(actor, req.server_name, req.config)
    return server_out(service.keyring, row)


@router.get("/", operation_id="mcp_list_mcp_servers", response_model=list[MCPServerOut])
async def list_mcp_servers(actor: ActorDep, service: MCPServiceDep) -> Any:
    return [server_out(service.keyring, row) for row in await service.list_rows(actor)]


@router.get(
    "/connect/{mcp_server_id}",
    operation_id="mcp_connect_mcp_server",
    responses={
        200: {
            "content": {"text/event-stream": {"schema": {"type": "string", "description": "Server-Sent Events stream"}}}
        }
    },
)
async def connect_mcp_server(
    mcp_server_id: str, request: Request, actor: ActorDep, service: MCPServiceDep, sessionmaker: SessionmakerDep
) -> StreamingResponse:
    row = await service.get_row(actor, mcp_server_id)
    try:
        spec = connection.spec_for(service.settings, row)
    except MCPError as exc:
        return StreamingResponse(iter([event("error", message=str(exc))]), media_type="text/event-stream")
    uri = redirect_uri(service.settings, str(request.base_url))
    req = ConnectRequest(actor, spec, uri, server_id=row.id, oauth_on_any_error=True)
    return StreamingResponse(connect_events(sessionmaker, service.settings, req), media_type="text/event-stream")


@router.get("/{mcp_server_id}", operation_id="mcp_retrieve_mcp_server", response_model=MCPServerOut)
async def retrieve_mcp_server(mcp_server_id: str, actor: ActorDep, service: MCPServiceDep) -> Any:
    return server_out(service.keyring, await service.get_row(actor, mcp_server_id))


@router.patch("/{mcp_server_id}", operation_id="mcp_update_mcp_server", response_model=MCPServerOut)
async def update_mcp_server(
    mcp_server_id: str, req: UpdateMCPServerRequest, actor: ActorDep, service: MCPServiceDep
) -> Any:
    row = await service.update(actor, mcp_server_id, req.server_name, req.config)
    return server_out(service.keyring, row)


@router.delete("/{mcp_server_id}", operation_id="mcp_delete_mcp_server", status_code=204)
async def delete_mcp_server(mcp_server_id: str, actor: ActorDep, service: MCPServiceDep) -> Response:
    await service.delete(actor, mcp_server_id)
    return Response(status_code=204)


@router.get("/{mcp_server_id}/tools", operation_id="mcp_list_tools_for_mcp_server", response_model=list[Tool])
async def list_tools_for_mcp_server(mcp_server_id: str, actor: ActorDep, service: MCPServiceDep) -> list[Tool]:
    return await service.tools_of(actor, mcp_server_id)


@router.get("/{mcp_server_id}/tools/{tool_id}", operation_id="mcp_retrieve_mcp_tool", response_model=Tool)
async def retrieve_mcp_tool(mcp_server_id: str, tool_id: str, actor: ActorDep, service: MCPServiceDep) -> Tool:
    return Tool.model_validate(await service.tool_row(actor, mcp_server_id, tool_id))


@router.post("/{mcp_server_id}/tools/{tool_id}/run", operation_id="mcp_run_tool", response_model=ToolExecutionResult)
async def run_mcp_tool(
    mcp_server_id: str,
    tool_id: str,
    actor: ActorDep,
    service: MCPServiceDep,
    req: MCPToolExecuteRequest = Body(default_factory=MCPToolExecuteRequest),
) -> ToolExecutionResult:
    return await service.run_tool(actor, mcp_server_id, tool_id, req.args)


@router.patch("/{mcp_server_id}/refresh", operation_id="mcp_refresh_mcp_server_tools")
async def refresh_mcp_server_tools(
    mcp_server_id: str, actor: ActorDep, service: MCPServiceDep, agent_id: str | None = None
) -> dict[str, list[str]]:
    changed = await service.refresh(actor, mcp_server_id, agent_id)
    return changed.model_dump()
