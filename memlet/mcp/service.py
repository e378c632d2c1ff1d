"""MCP servers: create, read, update, delete, tool discovery and refresh, running a server's tool.

A create or update stores the server first, then lists its tools (best effort: a server that cannot be reached
yet is kept with no tools, as in Letta). Services never commit; the route's session does.
"""

import json
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.config import Settings
from memlet.crypto import keyring_for
from memlet.db import models as orm
from memlet.errors import ConflictError, NotFoundError
from memlet.log import get_logger
from memlet.mcp import client, connection, credentials
from memlet.mcp.discovery import ToolSync, mcp_meta
from memlet.mcp.errors import MCPServerUnavailable, http_error
from memlet.mcp.repository import MCPServerRepository, OAuthSessionRepository
from memlet.mcp.schemas import (
    CreateConfig,
    CreateStdioMCPServer,
    ToolExecutionResult,
    ToolsChanged,
    UpdateConfig,
    UpdateStdioMCPServer,
)
from memlet.tools.repository import ToolRepository
from memlet.tools.schemas import Tool

log = get_logger("mcp")


def _name_taken(name: str) -> ConflictError:
    return ConflictError(f"An MCP server named {name!r} already exists")


class MCPServerService:
    def __init__(self, session: AsyncSession, settings: Settings) -> None:
        self.settings = settings
        self.keyring = keyring_for(settings)
        self.servers = MCPServerRepository(session)
        self.oauth = OAuthSessionRepository(session)
        self.tools = ToolRepository(session)

    # --- reading ---

    async def get_row(self, actor: Actor, server_id: str) -> orm.MCPServer:
        row = await self.servers.find(actor.organization_id, server_id)
        if row is None:
            raise NotFoundError("MCP server", server_id)
        return row

    async def list_rows(self, actor: Actor) -> list[orm.MCPServer]:
        return await self.servers.list_servers(actor.organization_id)

    async def tools_of(self, actor: Actor, server_id: str) -> list[Tool]:
        row = await self.get_row(actor, server_id)
        return [Tool.model_validate(t) for t in await self.tools.of_mcp_server(actor.organization_id, row.id)]

    async def tool_row(self, actor: Actor, server_id: str, tool_id: str) -> orm.Tool:
        row = await self.get_row(actor, server_id)
        tool = await self.tools.find(actor.organization_id, tool_id)
        if tool is None or mcp_meta(tool).get("server_id") != row.id:
            raise NotFoundError("Tool", tool_id, message=f"Tool {tool_id} not found on MCP server {server_id}")
        return tool

    # --- writing ---

    async def _check_config(self, config: Any) -> None:
        if isinstance(config, CreateStdioMCPServer | UpdateStdioMCPServer):
            connection.check_stdio(self.settings)
        elif getattr(config, "server_url", None) is not None:
            await connection.check_url(self.settings, config.server_url)

    async def create(self, actor: Actor, server_name: str, config: CreateConfig) -> orm.MCPServer:
        row = await self._insert(actor, server_name, config)
        if row.server_type != "stdio" and row.auth_token_enc is None:
            await self._adopt_oauth(actor, row)
        await self.discover(actor, row)
        return row

    async def import_server(
        self, actor: Actor, server_name: str, config: CreateConfig, metadata: dict[str, Any] | None = None
    ) -> orm.MCPServer | None:
        """The server an agent file names. The organization's server of that name is reused as it is (a file never
        changes a server's URL or credentials); otherwise a new one is stored from `config`, which carries no
        credentials, without discovery (the file brings its tools). A stdio server while stdio is off: None."""
        existing = await self.servers.find_by_name(actor.organization_id, server_name)
        if existing is not None:
            return existing
        if isinstance(config, CreateStdioMCPServer) and not self.settings.mcp_stdio:
            return None
        return await self._insert(actor, server_name, config, metadata)

    async def _insert(
        self, actor: Actor, server_name: str, config: CreateConfig, metadata: dict[str, Any] | None = None
    ) -> orm.MCPServer:
        await self._check_config(config)
        if await self.servers.find_by_name(actor.organization_id, server_name) is not None:
            raise _name_taken(server_name)
        values: dict[str, Any] = {
            "id": ids.new_id(ids.Prefix.MCP_SERVER),
            "organization_id": actor.organization_id,
            "server_name": server_name,
            "server_type": config.mcp_server_type,
            "created_by_id": actor.user_id,
            "last_updated_by_id": actor.user_id,
            "metadata_": dict(metadata or {}),
        }
        if isinstance(config, CreateStdioMCPServer):
            values |= {
                "command": config.command,
                "args": config.args,
                "env_enc": credentials.seal_map(self.keyring, config.env),
            }
        else:
            values |= {
                "server_url": config.server_url,
                "auth_header": config.auth_header or credentials.DEFAULT_AUTH_HEADER,
                "auth_token_enc": self.keyring.seal(credentials.bare_token(config.auth_token)),
                "custom_headers_enc": credentials.seal_map(self.keyring, config.custom_headers),
            }
        return await self.servers.add(values)

    async def _adopt_oauth(self, actor: Actor, row: orm.MCPServer) -> None:
        """A server created after its URL was authorized (legacy connect) uses that authorization's token."""
        authorized = await self.oauth.latest_tokens(actor.organization_id, row.server_url or "")
        if authorized is None:
            return
        tokens = json.loads(self.keyring.reveal(authorized.tokens_enc, "MCP OAuth tokens") or "{}")
        if tokens.get("access_token"):
            authorized.server_id = row.id
            row.auth_token_enc = self.keyring.seal(str(tokens["access_token"]))

    async def update(
        self, actor: Actor, server_id: str, server_name: str | None, config: UpdateConfig | None
    ) -> orm.MCPServer:
        row = await self.get_row(actor, server_id)
        if config is not None:
            if config.mcp_server_type != row.server_type:
                raise ConflictError(
                    f"MCP server {row.server_name!r} is {row.server_type}; its type cannot change to {config.mcp_server_type}"
                )
            await self._check_config(config)
            self._apply(row, config)
        if server_name is not None and server_name != row.server_name:
            if await self.servers.find_by_name(actor.organization_id, server_name) is not None:
                raise _name_taken(server_name)
            row.server_name = server_name
            await ToolSync(self.tools, actor).rename(row)
        row.last_updated_by_id = actor.user_id
        await self.servers.flush()
        if config is not None:
            await self.discover(actor, row)
        return row

    def _apply(self, row: orm.MCPServer, config: UpdateConfig) -> None:
        if isinstance(config, UpdateStdioMCPServer):
            row.command = config.command or row.command
            row.args = config.args if config.args is not None else row.args
            if config.env is not None:
                old = credentials.env(self.keyring, row)
                row.env_enc = credentials.seal_map(self.keyring, credentials.merge_masked(config.env, old))
            return
        row.server_url = config.server_url or row.server_url
        if config.auth_header is not None:
            row.auth_header = config.auth_header or credentials.DEFAULT_AUTH_HEADER
        token = credentials.bare_token(config.auth_token)
        if config.auth_token is not None and token != credentials.MASK:
            row.auth_token_enc = self.keyring.seal(token)
        if config.custom_headers is not None:
            old = credentials.custom_headers(self.keyring, row)
            merged = credentials.merge_masked(config.custom_headers, old)
            row.custom_headers_enc = credentials.seal_map(self.keyring, merged)

    async def delete(self, actor: Actor, server_id: str) -> None:
        """Delete a server and every tool discovered from it (their agent links go too)."""
        row = await self.get_row(actor, server_id)
        tools = await self.tools.of_mcp_server(actor.organization_id, row.id)
        await self.tools.delete_many(actor.organization_id, [t.id for t in tools])
        await self.oauth.delete_for_server(actor.organization_id, row.id, row.server_url)
        await self.servers.delete(actor.organization_id, row.id)

    # --- talking to the server ---

    async def discover(self, actor: Actor, row: orm.MCPServer) -> ToolsChanged:
        """List the live tools and store them; a server that cannot be reached keeps what it had."""
        try:
            live = await client.list_tools(connection.spec_for(self.settings, row), connection.limits(self.settings))
        except client.MCPError as exc:
            log.warning("MCP server %s: tools not listed: %s", row.server_name, exc)
            return ToolsChanged()
        return await ToolSync(self.tools, actor).sync(row, live)

    async def refresh(self, actor: Actor, server_id: str, agent_id: str | None = None) -> ToolsChanged:
        row = await self.get_row(actor, server_id)
        try:
            spec = connection.spec_for(self.settings, row, agent_id)
            live = await client.list_tools(spec, connection.limits(self.settings))
        except client.MCPError as exc:
            raise MCPServerUnavailable(row.server_name, str(exc)) from None
        return await ToolSync(self.tools, actor).sync(row, live)

    async def live_tools(self, row: orm.MCPServer) -> list[dict[str, Any]]:
        """The server's tools as it lists them now (Letta's MCPTool shape); 502/408 when it cannot."""
        try:
            live = await client.list_tools(connection.spec_for(self.settings, row), connection.limits(self.settings))
        except client.MCPError as exc:
            raise http_error(exc) from None
        return [client.tool_dict(t) for t in live]

    async def call(self, row: orm.MCPServer, tool_name: str, args: dict[str, Any]) -> client.CallResult:
        try:
            spec = connection.spec_for(self.settings, row)
            return await client.call_tool(spec, connection.limits(self.settings), tool_name, args)
        except client.MCPError as exc:
            raise http_error(exc) from None

    async def run_tool(self, actor: Actor, server_id: str, tool_id: str, args: dict[str, Any]) -> ToolExecutionResult:
        tool = await self.tool_row(actor, server_id, tool_id)
        row = await self.get_row(actor, server_id)
        result = await self.call(row, str(mcp_meta(tool).get("tool_name") or tool.name), args)
        return ToolExecutionResult(status="success" if result.success else "error", func_return=result.text)
