"""The MCP service as a FastAPI dependency."""

from typing import Annotated

from fastapi import Depends

from memlet.api.deps import SessionDep, SettingsDep
from memlet.mcp.service import MCPServerService


async def get_mcp_service(session: SessionDep, settings: SettingsDep) -> MCPServerService:
    return MCPServerService(session, settings)


MCPServiceDep = Annotated[MCPServerService, Depends(get_mcp_service)]
