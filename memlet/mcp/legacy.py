"""The legacy `/v1/tools/mcp/servers` operations (servers by name), mapped onto `MCPServerService`."""

from typing import Any

from pydantic import ValidationError

from memlet.actor import Actor
from memlet.db import models as orm
from memlet.errors import NotFoundError, UnprocessableError
from memlet.mcp import client, connection
from memlet.mcp.discovery import ToolSync
from memlet.mcp.errors import MCPServerNotFound, http_error
from memlet.mcp.schemas import (
    CreateConfig,
    CreateSSEMCPServer,
    CreateStdioMCPServer,
    CreateStreamableHTTPMCPServer,
    LegacyConfig,
    LegacyUpdateSSE,
    LegacyUpdateStdio,
    LegacyUpdateStreamableHTTP,
    SSEServerConfig,
    StdioServerConfig,
    ToolsChanged,
    UpdateConfig,
    UpdateSSEMCPServer,
    UpdateStdioMCPServer,
    UpdateStreamableHTTPMCPServer,
)
from memlet.mcp.service import MCPServerService
from memlet.mcp.tool_schema import health
from memlet.tools.schemas import Tool


def create_config(config: LegacyConfig) -> CreateConfig:
    if isinstance(config, StdioServerConfig):
        return CreateStdioMCPServer(command=config.command, args=config.args, env=config.env)
    fields = config.model_dump(include={"server_url", "auth_header", "auth_token", "custom_headers"})
    if isinstance(config, SSEServerConfig):
        return CreateSSEMCPServer(**fields)
    return CreateStreamableHTTPMCPServer(**fields)


def update_config(row: orm.MCPServer, body: dict[str, Any]) -> tuple[str | None, UpdateConfig | None]:
    """A legacy PATCH body, read as the shape of the stored server's type."""
    try:
        if row.server_type == "stdio":
            stdio = LegacyUpdateStdio.model_validate(body)
            cfg = stdio.stdio_config
            update = UpdateStdioMCPServer(command=cfg.command, args=cfg.args, env=cfg.env) if cfg else None
            return stdio.server_name, update
        if row.server_type == "sse":
            sse = LegacyUpdateSSE.model_validate(body)
            fields = {"server_url": sse.server_url, "auth_token": sse.token, "custom_headers": sse.custom_headers}
            return sse.server_name, UpdateSSEMCPServer(**fields)
        http = LegacyUpdateStreamableHTTP.model_validate(body)
        fields = http.model_dump(include={"server_url", "auth_header", "auth_token", "custom_headers"})
        return http.server_name, UpdateStreamableHTTPMCPServer(**fields)
    except ValidationError as exc:
        raise UnprocessableError(f"Invalid update for MCP server {row.server_name!r}: {exc.errors()}") from None


class LegacyMCPService:
    def __init__(self, service: MCPServerService) -> None:
        self.service = service

    async def by_name(self, actor: Actor, name: str) -> orm.MCPServer:
        row = await self.service.servers.find_by_name(actor.organization_id, name)
        if row is None:
            raise MCPServerNotFound(name)
        return row

    async def add(self, actor: Actor, config: LegacyConfig) -> None:
        """Create the server, or replace the config of the one with this name."""
        row = await self.service.servers.find_by_name(actor.organization_id, config.server_name)
        if row is None:
            await self.service.create(actor, config.server_name, create_config(config))
            return
        created = create_config(config).model_dump()
        update: UpdateConfig
        if isinstance(config, StdioServerConfig):
            update = UpdateStdioMCPServer(**created)
        elif isinstance(config, SSEServerConfig):
            update = UpdateSSEMCPServer(**created)
        else:
            update = UpdateStreamableHTTPMCPServer(**created)
        await self.service.update(actor, row.id, None, update)

    async def update(self, actor: Actor, name: str, body: dict[str, Any]) -> orm.MCPServer:
        row = await self.by_name(actor, name)
        server_name, config = update_config(row, body)
        return await self.service.update(actor, row.id, server_name, config)

    async def delete(self, actor: Actor, name: str) -> None:
        await self.service.delete(actor, (await self.by_name(actor, name)).id)

    async def live_tools(self, actor: Actor, name: str) -> list[dict[str, Any]]:
        tools = await self.service.live_tools(await self.by_name(actor, name))
        return [{**t, "health": health(t.get("inputSchema"))} for t in tools]

    async def resync(self, actor: Actor, name: str, agent_id: str | None) -> ToolsChanged:
        return await self.service.refresh(actor, (await self.by_name(actor, name)).id, agent_id)

    async def add_tool(self, actor: Actor, name: str, tool_name: str) -> Tool:
        row = await self.by_name(actor, name)
        try:
            live = await client.list_tools(
                connection.spec_for(self.service.settings, row), connection.limits(self.service.settings)
            )
        except client.MCPError as exc:
            raise http_error(exc) from None
        tool = next((t for t in live if t.name == tool_name), None)
        if tool is None:
            raise NotFoundError("MCP tool", message=f"Tool {tool_name!r} not found on MCP server {name!r}")
        return Tool.model_validate(await ToolSync(self.service.tools, actor).ensure(row, tool))

    async def execute(self, actor: Actor, name: str, tool_name: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await self.service.call(await self.by_name(actor, name), tool_name, args)
        return {"result": result.text, "success": result.success}

    async def test(self, config: LegacyConfig) -> dict[str, Any]:
        """Connect with a config that is not stored and list its tools."""
        settings = self.service.settings
        if isinstance(config, StdioServerConfig):
            connection.check_stdio(settings)
        else:
            await connection.check_url(settings, config.server_url)
        try:
            live = await client.list_tools(connection.spec_from_config(settings, config), connection.limits(settings))
        except client.MCPError as exc:
            raise http_error(exc) from None
        return {"status": "success", "tools": [client.tool_dict(t) for t in live]}
