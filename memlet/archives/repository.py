"""SQL for archives and their attachment to agents."""

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm
from memlet.db.pagination import Page, fetch_page

A, AA = orm.Archive, orm.ArchiveAgent


class ArchiveRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def add(self, row: orm.Archive) -> None:
        self.session.add(row)
        await self.session.flush()

    async def find(self, org_id: str, archive_id: str) -> orm.Archive | None:
        return await self.session.scalar(select(A).where(A.id == archive_id, A.organization_id == org_id))

    async def find_agent(self, org_id: str, agent_id: str, *, for_update: bool = False) -> orm.Agent | None:
        stmt = select(orm.Agent).where(orm.Agent.id == agent_id, orm.Agent.organization_id == org_id)
        if for_update:
            stmt = stmt.with_for_update()
        return await self.session.scalar(stmt)

    async def delete(self, archive_id: str) -> None:
        await self.session.execute(delete(A).where(A.id == archive_id))

    async def list_page(self, org_id: str, page: Page, *, name: str | None, agent_id: str | None) -> list[Any]:
        stmt = select(A).where(A.organization_id == org_id)
        if name is not None:
            stmt = stmt.where(A.name == name)
        if agent_id is not None:
            stmt = stmt.where(A.id.in_(select(AA.archive_id).where(AA.agent_id == agent_id)))
        return await fetch_page(self.session, stmt, page, sort_col=A.created_at, id_col=A.id)

    async def of_agent(self, agent_id: str) -> list[orm.Archive]:
        """The agent's archives, its own (default) one first, then by attachment time."""
        rows = await self.session.scalars(
            select(A)
            .join(AA, AA.archive_id == A.id)
            .where(AA.agent_id == agent_id)
            .order_by(AA.is_owner.desc(), AA.created_at, A.id)
        )
        return list(rows)

    async def ids_of_agent(self, agent_id: str) -> list[str]:
        return [a.id for a in await self.of_agent(agent_id)]

    async def attach(self, agent_id: str, archive_id: str, *, is_owner: bool = False) -> None:
        stmt = insert(AA).values(agent_id=agent_id, archive_id=archive_id, is_owner=is_owner)
        await self.session.execute(stmt.on_conflict_do_nothing())

    async def detach(self, agent_id: str, archive_id: str) -> None:
        await self.session.execute(delete(AA).where(AA.agent_id == agent_id, AA.archive_id == archive_id))

    async def agents_page(self, org_id: str, archive_id: str, page: Page) -> list[Any]:
        ag = orm.Agent
        stmt = select(ag).where(
            ag.organization_id == org_id, ag.id.in_(select(AA.agent_id).where(AA.archive_id == archive_id))
        )
        return await fetch_page(self.session, stmt, page, sort_col=ag.created_at, id_col=ag.id)

    async def latest_embedding_config(self, org_id: str) -> dict[str, Any] | None:
        return await self.session.scalar(
            select(A.embedding_config)
            .where(A.organization_id == org_id, func.jsonb_typeof(A.embedding_config) == "object")
            .order_by(A.created_at.desc())
            .limit(1)
        )

    async def agent_ids(self, archive_ids: Sequence[str]) -> list[str]:
        rows = await self.session.scalars(select(AA.agent_id).where(AA.archive_id.in_(list(archive_ids))).distinct())
        return list(rows)
