"""`MCPServerService` and `ToolSync` against the embedded Postgres and the demo MCP server (streamable HTTP)."""

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.actor import DEFAULT_ACTOR
from memlet.bootstrap import ensure_defaults
from memlet.config import Settings
from memlet.db import models as orm
from memlet.mcp.schemas import CreateStreamableHTTPMCPServer, UpdateStreamableHTTPMCPServer
from memlet.mcp.service import MCPServerService
from memlet.tools.repository import ToolRepository
from tests.api.mcp_fixtures import DEMO_TOOLS, HttpDemo, http_demo

__all__ = ["http_demo"]


@pytest.fixture
async def db(session: AsyncSession) -> AsyncSession:
    await ensure_defaults(session)  # the default organization (the rolled-back test transaction may be the first)
    return session


def _service(db: AsyncSession, settings: Settings) -> MCPServerService:
    return MCPServerService(db, settings.model_copy(update={"allowed_hosts": "127.0.0.1"}))


async def _demo(service: MCPServerService, http_demo: HttpDemo, name: str = "demo") -> orm.MCPServer:
    config = CreateStreamableHTTPMCPServer(server_url=http_demo.streamable_http)
    return await service.create(DEFAULT_ACTOR, name, config)


async def test_refresh_updates_a_changed_tool_and_keeps_its_id(
    db: AsyncSession, settings: Settings, http_demo: HttpDemo
) -> None:
    service = _service(db, settings)
    row = await _demo(service, http_demo)
    tools = {t.name: t for t in await ToolRepository(db).of_mcp_server(DEFAULT_ACTOR.organization_id, row.id)}
    assert set(tools) >= DEMO_TOOLS
    tools["echo"].description = "stale"
    changed = await service.refresh(DEFAULT_ACTOR, row.id)
    assert changed.updated == ["echo"] and changed.added == changed.deleted == []
    assert tools["echo"].description == "Echo a message back."


async def test_rename_retags_the_tools(db: AsyncSession, settings: Settings, http_demo: HttpDemo) -> None:
    service = _service(db, settings)
    row = await _demo(service, http_demo, "before")
    await service.update(DEFAULT_ACTOR, row.id, "after", None)
    for tool in await ToolRepository(db).of_mcp_server(DEFAULT_ACTOR.organization_id, row.id):
        assert tool.tags == ["mcp:after"] and tool.metadata_["mcp"]["server_name"] == "after"
        assert tool.metadata_["mcp"]["server_id"] == row.id


async def test_a_token_update_is_sealed_and_masked_values_keep_the_old_one(
    db: AsyncSession, settings: Settings, http_demo: HttpDemo
) -> None:
    service = _service(db, settings)
    row = await _demo(service, http_demo)
    url = http_demo.streamable_http
    await service.update(
        DEFAULT_ACTOR, row.id, None, UpdateStreamableHTTPMCPServer(server_url=url, auth_token="Bearer t1")
    )
    first = row.auth_token_enc
    assert service.keyring.reveal(first) == "t1"
    masked = UpdateStreamableHTTPMCPServer(server_url=url, auth_token="Bearer ********")
    await service.update(DEFAULT_ACTOR, row.id, None, masked)
    assert row.auth_token_enc == first


async def test_delete_removes_the_server_tools(db: AsyncSession, settings: Settings, http_demo: HttpDemo) -> None:
    service = _service(db, settings)
    row = await _demo(service, http_demo)
    other = await _demo(service, http_demo, "other")
    await service.delete(DEFAULT_ACTOR, row.id)
    repo = ToolRepository(db)
    assert await repo.of_mcp_server(DEFAULT_ACTOR.organization_id, row.id) == []
    assert len(await repo.of_mcp_server(DEFAULT_ACTOR.organization_id, other.id)) >= len(DEMO_TOOLS)
