"""Running an `external_mcp` tool for the agent loop.

The server is found by the id recorded in the tool's metadata when it was discovered, never by name, so renaming a
server does not break the agents that use its tools. Each call opens its own short connection under the MCP
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
    server_id = str(meta.get("server_id") or "")
    async with sessionmaker() as session:
        row = await MCPServerRepository(session).find(tool.organization_id, server_id) if server_id else None
    if row is None:
        # An imported tool (an .af file) names its server; a discovered one points at it by id.
        server = server_id or str(meta.get("server_name") or "unknown")
        raise client.MCPConnectError(
            f"tool {tool.name!r} needs the MCP server {server!r}, which no longer exists or was never created here; "
            "create it and refresh its tools"
        )
    spec = connection.spec_for(settings, row, agent_id, secrets)
    return await client.call_tool(spec, connection.limits(settings), str(meta.get("tool_name") or tool.name), args)
