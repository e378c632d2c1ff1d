"""SQL for the message routes: history listings (by agent, run, step, organization) and single messages.

Every listing orders by ``sequence_id`` and counts stored rows (not public views) toward ``limit``.
"""

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm
from memlet.db.pagination import Page, fetch_page
from memlet.errors import NotFoundError

M = orm.Message


class MessageRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def find(self, org_id: str, message_id: str) -> orm.Message | None:
        return await self.session.scalar(select(M).where(M.id == message_id, M.organization_id == org_id))

    async def foreign_ids(self, agent_id: str, message_ids: Sequence[str]) -> list[str]:
        """The ids in ``message_ids`` that name no message of this agent (another agent's, or none at all)."""
        wanted = list(dict.fromkeys(message_ids))
        if not wanted:
            return []
        own = set(await self.session.scalars(select(M.id).where(M.id.in_(wanted), M.agent_id == agent_id)))
        return [i for i in wanted if i not in own]

    async def ensure_cursors(self, agent_id: str, *cursors: str | None) -> None:
        """404 for a cursor that names no message of this agent, with Letta's wording."""
        wanted = [c for c in cursors if c]
        if not wanted:
            return
        found = set(await self.session.scalars(select(M.id).where(M.id.in_(wanted), M.agent_id == agent_id)))
        for cursor in wanted:
            if cursor not in found:
                raise NotFoundError("Message", message=f"No message found with id '{cursor}' for agent '{agent_id}'.")

    async def tail(
        self, agent_id: str, *, after: str | None, before: str | None, limit: int | None, **filters: Any
    ) -> list[orm.Message]:
        """The newest ``limit`` rows of an agent between the cursors, oldest first (Letta's default history view).

        Cursors are absolute here, matching the oldest-first display: ``after`` = newer than, ``before`` = older
        than, so a client that pages backwards with ``before=<first id>`` walks the whole history once.
        """
        stmt = _filtered(select(M).where(M.agent_id == agent_id), **filters)
        return await self._tail(stmt, after, before, limit)

    async def tail_for_org(
        self, org_id: str, *, after: str | None, before: str | None, limit: int | None, **filters: Any
    ) -> list[orm.Message]:
        stmt = _filtered(select(M).where(M.organization_id == org_id), **filters)
        return await self._tail(stmt, after, before, limit)

    async def _tail(
        self, stmt: Select[Any], after: str | None, before: str | None, limit: int | None
    ) -> list[orm.Message]:
        if after:
            stmt = stmt.where(M.sequence_id > select(M.sequence_id).where(M.id == after).scalar_subquery())
        if before:
            stmt = stmt.where(M.sequence_id < select(M.sequence_id).where(M.id == before).scalar_subquery())
        stmt = stmt.order_by(M.sequence_id.desc())
        if limit is not None and limit > 0:
            stmt = stmt.limit(limit)
        rows = list(await self.session.scalars(stmt))
        return rows[::-1]

    async def page_for_agent(self, agent_id: str, page: Page, **filters: Any) -> list[orm.Message]:
        """Rows in the requested order with sort-relative cursors (see ``memlet.db.pagination``)."""
        return await self._page(_filtered(select(M).where(M.agent_id == agent_id), **filters), page)

    async def page_for_run(self, run_id: str, page: Page) -> list[orm.Message]:
        return await self._page(select(M).where(M.run_id == run_id), page)

    async def page_for_step(self, step_id: str, page: Page) -> list[orm.Message]:
        return await self._page(select(M).where(M.step_id == step_id), page)

    async def page_for_org(self, org_id: str, page: Page, **filters: Any) -> list[orm.Message]:
        return await self._page(_filtered(select(M).where(M.organization_id == org_id), **filters), page)

    async def _page(self, stmt: Select[Any], page: Page) -> list[orm.Message]:
        return await fetch_page(self.session, stmt, page, sort_col=M.sequence_id, id_col=M.id)

    async def add(self, rows: Sequence[orm.Message]) -> None:
        """Insert rows one by one so their sequence ids follow the list order."""
        for row in rows:
            self.session.add(row)
            await self.session.flush()


def _filtered(stmt: Select[Any], *, group_id: str | None = None, conversation_id: str | None = None) -> Select[Any]:
    if group_id:
        stmt = stmt.where(M.group_id == group_id)
    # "default" is the agent's own history: messages outside any conversation.
    if conversation_id == "default":
        stmt = stmt.where(M.conversation_id.is_(None))
    elif conversation_id is not None:
        stmt = stmt.where(M.conversation_id == conversation_id)
    return stmt
