"""SQL for blocks and their attachment to agents."""

from collections import defaultdict
from collections.abc import Sequence

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm


class BlockRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def add_many(self, rows: Sequence[orm.Block]) -> None:
        self.session.add_all(rows)
        await self.session.flush()

    async def find(self, org_id: str, block_id: str) -> orm.Block | None:
        return await self.session.scalar(
            select(orm.Block).where(orm.Block.id == block_id, orm.Block.organization_id == org_id)
        )

    async def by_ids(self, org_id: str, block_ids: Sequence[str]) -> list[orm.Block]:
        if not block_ids:
            return []
        rows = await self.session.scalars(
            select(orm.Block).where(orm.Block.id.in_(block_ids), orm.Block.organization_id == org_id)
        )
        return list(rows)

    async def for_agents(self, agent_ids: Sequence[str]) -> dict[str, list[orm.Block]]:
        """Blocks of many agents in one query, each list in attachment order."""
        result: dict[str, list[orm.Block]] = defaultdict(list)
        if not agent_ids:
            return result
        rows = await self.session.execute(
            select(orm.BlockAgent.agent_id, orm.Block)
            .join(orm.Block, orm.Block.id == orm.BlockAgent.block_id)
            .where(orm.BlockAgent.agent_id.in_(agent_ids))
            .order_by(orm.BlockAgent.agent_id, orm.BlockAgent.position, orm.Block.created_at)
        )
        for agent_id, block in rows:
            result[agent_id].append(block)
        return result

    async def attach(self, agent_id: str, blocks: Sequence[orm.Block]) -> None:
        """Attach blocks after the agent's existing ones (label uniqueness is enforced by a constraint)."""
        if not blocks:
            return
        start = await self.session.scalar(
            select(func.coalesce(func.max(orm.BlockAgent.position) + 1, 0)).where(orm.BlockAgent.agent_id == agent_id)
        )
        self.session.add_all(
            orm.BlockAgent(agent_id=agent_id, block_id=b.id, block_label=b.label, position=(start or 0) + i)
            for i, b in enumerate(blocks)
        )
        await self.session.flush()

    async def detach(self, agent_id: str, block_id: str) -> int:
        result = await self.session.execute(
            delete(orm.BlockAgent).where(orm.BlockAgent.agent_id == agent_id, orm.BlockAgent.block_id == block_id)
        )
        return int(result.rowcount or 0)  # type: ignore[attr-defined]

    async def labels_of(self, agent_id: str) -> set[str]:
        rows = await self.session.scalars(select(orm.BlockAgent.block_label).where(orm.BlockAgent.agent_id == agent_id))
        return set(rows)
