"""SQL for MCP servers and their OAuth sessions (discovered tools live in `ToolRepository`)."""

from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm

# Letta lists at most this many servers (no pagination).
LIST_LIMIT = 200


class MCPServerRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def find(self, org_id: str, server_id: str) -> orm.MCPServer | None:
        return await self.session.scalar(
            select(orm.MCPServer).where(orm.MCPServer.id == server_id, orm.MCPServer.organization_id == org_id)
        )

    async def find_by_name(self, org_id: str, name: str) -> orm.MCPServer | None:
        return await self.session.scalar(
            select(orm.MCPServer).where(orm.MCPServer.server_name == name, orm.MCPServer.organization_id == org_id)
        )

    async def list_servers(self, org_id: str) -> list[orm.MCPServer]:
        rows = await self.session.scalars(
            select(orm.MCPServer)
            .where(orm.MCPServer.organization_id == org_id)
            .order_by(orm.MCPServer.created_at, orm.MCPServer.id)
            .limit(LIST_LIMIT)
        )
        return list(rows)

    async def add(self, values: dict[str, Any]) -> orm.MCPServer:
        row = orm.MCPServer(**values)
        self.session.add(row)
        await self.session.flush()
        return row

    async def flush(self) -> None:
        await self.session.flush()

    async def delete(self, org_id: str, server_id: str) -> int:
        result = await self.session.execute(
            delete(orm.MCPServer).where(orm.MCPServer.id == server_id, orm.MCPServer.organization_id == org_id)
        )
        return int(result.rowcount or 0)  # type: ignore[attr-defined]


class OAuthSessionRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def add(self, values: dict[str, Any]) -> orm.MCPOAuthSession:
        row = orm.MCPOAuthSession(**values)
        self.session.add(row)
        await self.session.flush()
        return row

    async def by_state(self, state: str) -> orm.MCPOAuthSession | None:
        return await self.session.scalar(
            select(orm.MCPOAuthSession).where(orm.MCPOAuthSession.state == state).with_for_update()
        )

    async def find(self, org_id: str, session_id: str) -> orm.MCPOAuthSession | None:
        return await self.session.scalar(
            select(orm.MCPOAuthSession).where(
                orm.MCPOAuthSession.id == session_id, orm.MCPOAuthSession.organization_id == org_id
            )
        )

    async def latest_tokens(self, org_id: str, server_url: str) -> orm.MCPOAuthSession | None:
        """The newest authorized session with tokens for this URL (a server created after authorizing uses it)."""
        return await self.session.scalar(
            select(orm.MCPOAuthSession)
            .where(
                orm.MCPOAuthSession.organization_id == org_id,
                orm.MCPOAuthSession.server_url == server_url,
                orm.MCPOAuthSession.status == "authorized",
                orm.MCPOAuthSession.tokens_enc.is_not(None),
            )
            .order_by(orm.MCPOAuthSession.created_at.desc())
            .limit(1)
        )

    async def delete_for_server(self, org_id: str, server_id: str, server_url: str | None) -> None:
        """The sessions linked to a server, and unlinked ones for its URL."""
        stmt = delete(orm.MCPOAuthSession).where(orm.MCPOAuthSession.organization_id == org_id)
        if server_url:
            stmt = stmt.where(
                (orm.MCPOAuthSession.server_id == server_id) | (orm.MCPOAuthSession.server_url == server_url)
            )
        else:
            stmt = stmt.where(orm.MCPOAuthSession.server_id == server_id)
        await self.session.execute(stmt)
