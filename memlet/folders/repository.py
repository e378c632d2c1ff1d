"""SQL for folders (`sources`) and their attachment to agents (`sources_agents`)."""

from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, ScalarSelect, delete, func, select
from sqlalchemy.dialects.postgresql import aggregate_order_by, insert
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm
from memlet.db.pagination import Page, fetch_page
from memlet.db.row_shape import RowShape
from memlet.db.sql import escape_like

S, SA, F = orm.Source, orm.SourceAgent, orm.FileMetadata
FOLDER_ROWS = RowShape(orm.Source)


def agent_folders_array(agent_id: ColumnElement[str]) -> ScalarSelect[Any]:
    """The agent's folders in `FolderRepository.of_agent`'s order as one array of `FOLDER_ROWS` rows (NULL without
    any), to read with other things in one statement."""
    ordered = aggregate_order_by(FOLDER_ROWS.row(), SA.created_at, S.id)
    return (
        select(func.array_agg(ordered)).join_from(SA, S, SA.source_id == S.id).where(SA.agent_id == agent_id)
    ).scalar_subquery()


class FolderRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def add(self, row: orm.Source) -> None:
        self.session.add(row)
        await self.session.flush()

    async def find(self, org_id: str, source_id: str) -> orm.Source | None:
        return await self.session.scalar(select(S).where(S.id == source_id, S.organization_id == org_id))

    async def find_by_name(self, org_id: str, name: str) -> orm.Source | None:
        return await self.session.scalar(select(S).where(S.name == name, S.organization_id == org_id))

    async def find_agent(self, org_id: str, agent_id: str, *, for_update: bool = False) -> orm.Agent | None:
        """The agent a folder or file is attached to (folders sit below `agents`, so they read the row here)."""
        stmt = select(orm.Agent).where(orm.Agent.id == agent_id, orm.Agent.organization_id == org_id)
        return await self.session.scalar(stmt.with_for_update() if for_update else stmt)

    async def list_page(self, org_id: str, page: Page, *, name: str | None = None) -> list[Any]:
        stmt = select(S).where(S.organization_id == org_id)
        if name:  # as in Letta: any folder whose name holds it, in any case
            stmt = stmt.where(S.name.ilike(f"%{escape_like(name)}%", escape="\\"))
        return await fetch_page(self.session, stmt, page, sort_col=S.created_at, id_col=S.id)

    async def count(self, org_id: str) -> int:
        return int(
            await self.session.scalar(select(func.count()).select_from(S).where(S.organization_id == org_id)) or 0
        )

    async def delete(self, source_id: str) -> None:
        await self.session.execute(delete(S).where(S.id == source_id))

    async def attach(self, agent_id: str, source_id: str) -> None:
        await self.session.execute(insert(SA).values(agent_id=agent_id, source_id=source_id).on_conflict_do_nothing())

    async def detach(self, agent_id: str, source_id: str) -> None:
        await self.session.execute(delete(SA).where(SA.agent_id == agent_id, SA.source_id == source_id))

    async def agent_ids(self, source_id: str) -> list[str]:
        return list(await self.session.scalars(select(SA.agent_id).where(SA.source_id == source_id)))

    async def agent_ids_page(self, org_id: str, source_id: str, page: Page) -> list[str]:
        ag = orm.Agent
        stmt = select(ag).where(
            ag.organization_id == org_id, ag.id.in_(select(SA.agent_id).where(SA.source_id == source_id))
        )
        return [a.id for a in await fetch_page(self.session, stmt, page, sort_col=ag.created_at, id_col=ag.id)]

    async def of_agent_page(self, agent_id: str, page: Page) -> list[Any]:
        stmt = select(S).where(S.id.in_(select(SA.source_id).where(SA.agent_id == agent_id)))
        return await fetch_page(self.session, stmt, page, sort_col=S.created_at, id_col=S.id)

    async def of_agent(self, agent_id: str) -> list[orm.Source]:
        """The agent's folders in attachment order (the prompt's `<directories>` order)."""
        rows = await self.session.scalars(
            select(S).join(SA, SA.source_id == S.id).where(SA.agent_id == agent_id).order_by(SA.created_at, S.id)
        )
        return list(rows)

    async def for_agents(self, agent_ids: Sequence[str]) -> dict[str, list[orm.Source]]:
        """Each agent's folders in attachment order, for a page of agents in one query."""
        found: dict[str, list[orm.Source]] = {}
        if not agent_ids:
            return found
        rows = await self.session.execute(
            select(SA.agent_id, S)
            .join(S, S.id == SA.source_id)
            .where(SA.agent_id.in_(list(agent_ids)))
            .order_by(SA.created_at, S.id)
        )
        for agent_id, source in rows.tuples():
            found.setdefault(agent_id, []).append(source)
        return found

    async def file_totals(self, org_id: str) -> list[tuple[str, str, int, int]]:
        """(id, name, file count, total bytes) of every folder of the organization, by name."""
        stmt = (
            select(S.id, S.name, func.count(F.id), func.coalesce(func.sum(F.file_size), 0))
            .outerjoin(F, F.source_id == S.id)
            .where(S.organization_id == org_id)
            .group_by(S.id, S.name)
            .order_by(S.name)
        )
        return [(r[0], r[1], int(r[2] or 0), int(r[3] or 0)) for r in (await self.session.execute(stmt)).all()]

    async def file_sizes(self, org_id: str) -> list[tuple[str, str, str, int | None]]:
        """(folder id, file id, file name, size) of every file of the organization, by file name."""
        stmt = select(F.source_id, F.id, F.file_name, F.file_size).where(F.organization_id == org_id)
        return [tuple(r) for r in (await self.session.execute(stmt.order_by(F.file_name))).all()]  # type: ignore[misc]
