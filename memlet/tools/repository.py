"""SQL for tools and their attachment to agents."""

from collections import defaultdict
from collections.abc import Sequence

from sqlalchemy import delete, func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm


class ToolRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def find(self, org_id: str, tool_id: str) -> orm.Tool | None:
        return await self.session.scalar(
            select(orm.Tool).where(orm.Tool.id == tool_id, orm.Tool.organization_id == org_id)
        )

    async def by_ids(self, org_id: str, tool_ids: Sequence[str]) -> list[orm.Tool]:
        if not tool_ids:
            return []
        rows = await self.session.scalars(
            select(orm.Tool).where(orm.Tool.id.in_(tool_ids), orm.Tool.organization_id == org_id)
        )
        return list(rows)

    async def by_names(self, org_id: str, names: Sequence[str]) -> list[orm.Tool]:
        if not names:
            return []
        rows = await self.session.scalars(
            select(orm.Tool).where(orm.Tool.name.in_(names), orm.Tool.organization_id == org_id)
        )
        return list(rows)

    async def for_agents(self, agent_ids: Sequence[str]) -> dict[str, list[orm.Tool]]:
        """Tools of many agents in one query, each list in attachment order."""
        result: dict[str, list[orm.Tool]] = defaultdict(list)
        if not agent_ids:
            return result
        rows = await self.session.execute(
            select(orm.ToolAgent.agent_id, orm.Tool)
            .join(orm.Tool, orm.Tool.id == orm.ToolAgent.tool_id)
            .where(orm.ToolAgent.agent_id.in_(agent_ids))
            .order_by(orm.ToolAgent.agent_id, orm.ToolAgent.position, orm.Tool.name)
        )
        for agent_id, tool in rows:
            result[agent_id].append(tool)
        return result

    async def attach(self, agent_id: str, tool_ids: Sequence[str]) -> None:
        """Attach tools after the agent's existing ones; attaching twice is a no-op."""
        if not tool_ids:
            return
        start = await self.session.scalar(
            select(func.coalesce(func.max(orm.ToolAgent.position) + 1, 0)).where(orm.ToolAgent.agent_id == agent_id)
        )
        values = [{"agent_id": agent_id, "tool_id": t, "position": (start or 0) + i} for i, t in enumerate(tool_ids)]
        await self.session.execute(insert(orm.ToolAgent).values(values).on_conflict_do_nothing())

    async def detach(self, agent_id: str, tool_id: str) -> int:
        result = await self.session.execute(
            delete(orm.ToolAgent).where(orm.ToolAgent.agent_id == agent_id, orm.ToolAgent.tool_id == tool_id)
        )
        return int(result.rowcount or 0)  # type: ignore[attr-defined]
