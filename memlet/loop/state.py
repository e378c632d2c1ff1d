"""SQL the agent loop needs: load a step's state in few queries, and write a step's results."""

from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm


class LoopRepository:
    """Loop-side reads and writes. Never commits; the caller owns the transaction."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def blocks_of(self, agent_id: str) -> list[orm.Block]:
        """The agent's blocks in attachment order."""
        rows = await self.session.scalars(
            select(orm.Block)
            .join(orm.BlockAgent, orm.BlockAgent.block_id == orm.Block.id)
            .where(orm.BlockAgent.agent_id == agent_id)
            .order_by(orm.BlockAgent.position, orm.Block.created_at)
        )
        return list(rows)

    async def count_messages(self, agent_id: str) -> int:
        """Every stored message of the agent, in context or not."""
        count = await self.session.scalar(
            select(func.count()).select_from(orm.Message).where(orm.Message.agent_id == agent_id)
        )
        return int(count or 0)

    async def set_message_content(self, message_id: str, content: list[dict[str, Any]]) -> None:
        await self.session.execute(update(orm.Message).where(orm.Message.id == message_id).values(content=content))
