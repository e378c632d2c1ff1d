"""`/v1/tools/mcp/...`: Letta's legacy MCP routes (servers by name), the OAuth callback included."""

from typing import Any

from fastapi import APIRouter, Body, Query, Request
from fastapi.responses import StreamingResponse

from memlet.api.deps import ActorDep, SessionDep, SessionmakerDep
from memlet.mcp import connection
from memlet.mcp.client import MCPError
from memlet.mcp.deps import MCPServiceDep
from memlet.mcp.legacy import LegacyMCPService
from memlet.mcp.oauth import ConnectRequest, connect_events, event, record_callback, redirect_uri
from memlet.mcp.schemas import (
    LegacyConfig,
    LegacyUpdate,
    MCPToolExecuteRequest,
    SSEServerConfig,
    StdioServerConfig,
    StreamableHTTPServerConfig,
)
from memlet.mcp.service import MCPServerService
from memlet.mcp.views import legacy_config
from memlet.tools.schemas import Tool

router = APIRouter(prefix="/tools/mcp", tags=["tools"])
ConfigOut = StdioServerConfig | SSEServerConfig | StreamableHTTPServerConfig
_SSE: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/event-stream": {"schema": {"type": "string", "description": "Server-Sent Events stream"}}}}
}


async def _configs(service: MCPServerService, actor: ActorDep) -> list[ConfigOut]:
    return [legacy_config(service.keyring, row) for row in await service.list_rows(actor)]


@router.get("/servers", operation_id="list_mcp_servers", response_model=dict[str, ConfigOut])
async def list_mcp_servers(actor: ActorDep, service: MCPServiceDep) -> Any:
    return {c.server_name: c for c in await _configs(service, actor)}


@router.put("/servers", operation_id="add_mcp_server", response_model=list[ConfigOut])
async def add_mcp_server(req: LegacyConfig, actor: ActorDep, service: MCPServiceDep) -> Any:
    await LegacyMCPService(service).add(actor, req)
    return await _configs(service, actor)


@router.post("/servers/test", operation_id="test_mcp_server")
async def test_mcp_server(req: LegacyConfig, service: MCPServiceDep, actor: ActorDep) -> dict[str, Any]:
    return await LegacyMCPService(service).test(req)


@router.post("/servers/connect", operation_id="connect_mcp_server", responses=_SSE)
async def connect_mcp_server(
    req: LegacyConfig, request: Request, actor: ActorDep, service: MCPServiceDep, sessionmaker: SessionmakerDep
) -> StreamingResponse:
    settings = service.settings
    try:
        if not isinstance(req, StdioServerConfig):
            await connection.check_url(settings, req.server_url)
        spec = connection.spec_from_config(settings, req)
    except MCPError as exc:
        return StreamingResponse(iter([event("error", message=str(exc))]), media_type="text/event-stream")
    connect = ConnectRequest(actor, spec, redirect_uri(settings, str(request.base_url)))
    return StreamingResponse(connect_events(sessionmaker, settings, connect), media_type="text/event-stream")


@router.get("/servers/{mcp_server_name}/tools", operation_id="list_mcp_tools_by_server")
async def list_mcp_tools_by_server(
    mcp_server_name: str, actor: ActorDep, service: MCPServiceDep
) -> list[dict[str, Any]]:
    return await LegacyMCPService(service).live_tools(actor, mcp_server_name)


@router.post("/servers/{mcp_server_name}/resync", operation_id="resync_mcp_server_tools")
async def resync_mcp_server_tools(
    mcp_server_name: str, actor: ActorDep, service: MCPServiceDep, agent_id: str | None = None
) -> dict[str, list[str]]:
    return (await LegacyMCPService(service).resync(actor, mcp_server_name, agent_id)).model_dump()


@router.post("/servers/{mcp_server_name}/{mcp_tool_name}", operation_id="add_mcp_tool", response_model=Tool)
async def add_mcp_tool(mcp_server_name: str, mcp_tool_name: str, actor: ActorDep, service: MCPServiceDep) -> Tool:
    return await LegacyMCPService(service).add_tool(actor, mcp_server_name, mcp_tool_name)


@router.patch("/servers/{mcp_server_name}", operation_id="update_mcp_server", response_model=ConfigOut)
async def update_mcp_server(mcp_server_name: str, req: LegacyUpdate, actor: ActorDep, service: MCPServiceDep) -> Any:
    row = await LegacyMCPService(service).update(actor, mcp_server_name, req.model_dump(exclude_unset=True))
    return legacy_config(service.keyring, row)


@router.delete("/servers/{mcp_server_name}", operation_id="delete_mcp_server", response_model=list[ConfigOut])
async def delete_mcp_server(mcp_server_name: str, actor: ActorDep, service: MCPServiceDep) -> Any:
    await LegacyMCPService(service).delete(actor, mcp_server_name)
    return await _configs(service, actor)


@router.post("/servers/{mcp_server_name}/tools/{tool_name}/execute", operation_id="execute_mcp_tool")
async def execute_mcp_tool(
    mcp_server_name: str, tool_name: str, actor: ActorDep, service: MCPServiceDep, req: MCPToolExecuteRequest = Body()
) -> dict[str, Any]:
    return await LegacyMCPService(service).execute(actor, mcp_server_name, tool_name, req.args)


@router.get("/oauth/callback", operation_id="mcp_oauth_callback")
async def mcp_oauth_callback(
    session: SessionDep,
    service: MCPServiceDep,
    code: str | None = Query(default=None, description="OAuth authorization code"),
    state: str | None = Query(default=None, description="OAuth state parameter"),
    error: str | None = Query(default=None, description="OAuth error"),
    error_description: str | None = Query(default=None, description="OAuth error description"),
) -> dict[str, Any]:
    return await record_callback(session, service.keyring, code, state, error, error_description)
