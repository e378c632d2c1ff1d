"""SQL for `files_agents`: which files an agent sees, which are open, and the window of each open one."""

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.db import models as orm
from memlet.db.pagination import Page, fetch_page

FA = orm.FileAgent
# A closed file shows nothing; its last window (start_line / end_line) stays on the row, as Letta keeps it.
_CLOSED = {"is_open": False, "visible_content": None}


class FileAgentRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def of_agent(self, agent_id: str) -> list[orm.FileAgent]:
        """Every file the agent sees, in the order they were attached."""
        return list(
            await self.session.scalars(select(FA).where(FA.agent_id == agent_id).order_by(FA.created_at, FA.id))
        )

    async def of_agents(self, agent_ids: Sequence[str]) -> list[orm.FileAgent]:
        stmt = select(FA).where(FA.agent_id.in_(list(agent_ids))).order_by(FA.created_at, FA.id)
        return list(await self.session.scalars(stmt))

    async def find_by_name(self, agent_id: str, file_name: str) -> orm.FileAgent | None:
        return await self.session.scalar(select(FA).where(FA.agent_id == agent_id, FA.file_name == file_name))

    async def find_by_file(self, agent_id: str, file_id: str) -> orm.FileAgent | None:
        return await self.session.scalar(select(FA).where(FA.agent_id == agent_id, FA.file_id == file_id))

    async def open_oldest_first(self, agent_id: str) -> list[orm.FileAgent]:
        stmt = select(FA).where(FA.agent_id == agent_id, FA.is_open.is_(True)).order_by(FA.last_accessed_at, FA.id)
        return list(await self.session.scalars(stmt))

    def add_link(self, agent: orm.Agent, meta: orm.FileMetadata) -> orm.FileAgent:
        """A new link of the agent to one file, added to the session unflushed; the caller sets its window."""
        row = orm.FileAgent(
            id=ids.new_id("file_agent"),
            organization_id=agent.organization_id,
            agent_id=agent.id,
            file_id=meta.id,
            source_id=meta.source_id,
            file_name=meta.file_name,
        )
        self.session.add(row)
        return row

    async def add(self, row: orm.FileAgent) -> None:
        self.session.add(row)
        await self.session.flush()

    async def close(self, agent_id: str, file_ids: Sequence[str]) -> None:
        if file_ids:
            await self.session.execute(
                update(FA).where(FA.agent_id == agent_id, FA.file_id.in_(list(file_ids))).values(**_CLOSED)
            )

    async def close_keeping_view(self, agent_id: str, file_id: str) -> None:
        """Close one file but keep its last view and window on the row (the REST close, as in Letta)."""
        await self.session.execute(
            update(FA)
            .where(FA.agent_id == agent_id, FA.file_id == file_id)
            .values(is_open=False, last_accessed_at=func.now())
        )

    async def close_all_except(self, agent_id: str, keep_names: Sequence[str]) -> list[str]:
        """Close every open file of the agent but `keep_names`; the names closed."""
        stmt = update(FA).where(FA.agent_id == agent_id, FA.is_open.is_(True))
        if keep_names:
            stmt = stmt.where(FA.file_name.not_in(list(keep_names)))
        return list(await self.session.scalars(stmt.values(**_CLOSED).returning(FA.file_name)))

    async def mark_access(self, agent_id: str, file_names: Sequence[str]) -> None:
        if file_names:
            await self.session.execute(
                update(FA)
                .where(FA.agent_id == agent_id, FA.file_name.in_(list(file_names)))
                .values(last_accessed_at=func.now())
            )

    async def remove_source(self, agent_id: str, source_id: str) -> None:
        await self.session.execute(delete(FA).where(FA.agent_id == agent_id, FA.source_id == source_id))

    async def agent_ids_of_file(self, file_id: str) -> list[str]:
        return list(await self.session.scalars(select(FA.agent_id).where(FA.file_id == file_id)))

    async def list_page(self, agent_id: str, page: Page, *, is_open: bool | None) -> list[Any]:
        stmt = select(FA).where(FA.agent_id == agent_id)
        if is_open is not None:
            stmt = stmt.where(FA.is_open.is_(is_open))
        return await fetch_page(self.session, stmt, page, sort_col=FA.created_at, id_col=FA.id)
