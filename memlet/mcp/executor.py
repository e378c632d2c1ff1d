"""Running an `external_mcp` tool for the agent loop.

The server is found by the id recorded in the tool's metadata when it was discovered, never by name, so renaming a
server does not break the agents that use its tools. Only a tool with no server id (imported from an agent file
whose server was not there) is matched by the server name it carries. Each call opens its own short connection under the MCP
deadlines (`memlet.mcp.client`), so a hung server fails the call, not the step.
"""

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet.config import Settings
from memlet.db import models as orm
from memlet.mcp import client, connection
from memlet.mcp.discovery import mcp_meta
from memlet.mcp.repository import MCPServerRepository


async def run_mcp_tool(
    sessionmaker: async_sessionmaker[AsyncSession],
    settings: Settings,
    tool: orm.Tool,
    args: dict[str, Any],
    agent_id: str | None = None,
    secrets: dict[str, str] | None = None,
) -> client.CallResult:
    """Call `tool` on its server; raises `client.MCPError` when the server is gone or cannot be used."""
    meta = mcp_meta(tool)
    server_id, server_name = str(meta.get("server_id") or ""), str(meta.get("server_name") or "")
    async with sessionmaker() as session:
        servers = MCPServerRepository(session)
        if server_id:
            row = await servers.find(tool.organization_id, server_id)
        else:  # an imported tool whose server was not there: bound by name once one exists
            row = await servers.find_by_name(tool.organization_id, server_name) if server_name else None
    if row is None:
        raise client.MCPConnectError(_missing(tool, meta, settings))
    spec = connection.spec_for(settings, row, agent_id, secrets)
    return await client.call_tool(spec, connection.limits(settings), str(meta.get("tool_name") or tool.name), args)


def _missing(tool: orm.Tool, meta: dict[str, Any], settings: Settings) -> str:
    server = str(meta.get("server_name") or meta.get("server_id") or "unknown")
    if meta.get("server_type") == "stdio" and not settings.mcp_stdio and not meta.get("server_id"):
        return (
            f"tool {tool.name!r} needs the stdio MCP server {server!r}, which was not created when the agent was "
            f"imported: {connection.STDIO_DISABLED}"
        )
    return (
        f"tool {tool.name!r} needs the MCP server {server!r}, which no longer exists or was never created here; "
        "create it and refresh its tools"
    )
