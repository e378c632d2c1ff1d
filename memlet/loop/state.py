"""SQL the agent loop needs: load a step's state in few queries, and write a step's results.

Loading is three queries (agent + in-context messages, blocks, tools); the loop then closes its transaction and
works on these detached rows (sessions use expire_on_commit=False).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ARRAY, String, delete, func, insert, literal, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm
from memlet.db.base import utcnow
from memlet.db.sql import escape_like

# Every column but the identity, which the database numbers.
_MESSAGE_COLUMNS = tuple(c.key for c in orm.Message.__mapper__.column_attrs if c.key != "sequence_id")


@dataclass
class LoopState:
    """Everything one step reads: the agent row, its blocks (attachment order), tools and in-context messages."""

    agent: orm.Agent
    blocks: list[orm.Block]
    tools: list[orm.Tool]
    messages: list[orm.Message]  # message_ids order, the system message first


class LoopRepository:
    """Loop-side reads and writes. Never commits; the caller owns the transaction."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def load_state(self, agent_id: str, organization_id: str) -> LoopState | None:
        """The agent and what its next step needs, or None for an unknown agent."""
        agent = await self.session.scalar(
            select(orm.Agent).where(orm.Agent.id == agent_id, orm.Agent.organization_id == organization_id)
        )
        if agent is None:
            return None
        messages = await self.messages_by_ids(agent.id, agent.message_ids or [])
        return LoopState(
            agent=agent, blocks=await self.blocks_of(agent_id), tools=await self.tools_of(agent_id), messages=messages
        )

    async def lock_agent_row(self, agent_id: str) -> orm.Agent | None:
        """Re-read the agent row inside the commit transaction (fresh message_ids)."""
        return await self.session.scalar(
            select(orm.Agent).where(orm.Agent.id == agent_id).execution_options(populate_existing=True)
        )

    async def messages_by_ids(self, agent_id: str, message_ids: Sequence[str]) -> list[orm.Message]:
        """The agent's rows for `message_ids`, in that order (unknown ids and other agents' rows are skipped)."""
        if not message_ids:
            return []
        rows = await self.session.scalars(
            select(orm.Message).where(orm.Message.id.in_(list(message_ids)), orm.Message.agent_id == agent_id)
        )
        by_id = {row.id: row for row in rows}
        return [by_id[i] for i in message_ids if i in by_id]

    async def blocks_of(self, agent_id: str) -> list[orm.Block]:
        """The agent's blocks in attachment order."""
        rows = await self.session.scalars(
            select(orm.Block)
            .join(orm.BlockAgent, orm.BlockAgent.block_id == orm.Block.id)
            .where(orm.BlockAgent.agent_id == agent_id)
            .order_by(orm.BlockAgent.position, orm.Block.created_at)
        )
        return list(rows)

    async def tools_of(self, agent_id: str) -> list[orm.Tool]:
        rows = await self.session.scalars(
            select(orm.Tool)
            .join(orm.ToolAgent, orm.ToolAgent.tool_id == orm.Tool.id)
            .where(orm.ToolAgent.agent_id == agent_id)
            .order_by(orm.ToolAgent.position, orm.Tool.name)
        )
        return list(rows)

    async def count_messages(self, agent_id: str) -> int:
        """Every stored message of the agent, in context or not."""
        count = await self.session.scalar(
            select(func.count()).select_from(orm.Message).where(orm.Message.agent_id == agent_id)
        )
        return int(count or 0)

    async def set_message_content(self, agent_id: str, message_id: str, content: list[dict[str, Any]]) -> None:
        """Rewrite one of the agent's own messages (never another agent's, whatever its message_ids say)."""
        await self.session.execute(
            update(orm.Message)
            .where(orm.Message.id == message_id, orm.Message.agent_id == agent_id)
            .values(content=content)
        )

    async def add_messages(self, rows: Sequence[orm.Message]) -> None:
        """Insert rows in one statement; sequence ids follow the list order (VALUES rows are numbered in order)."""
        if not rows:
            return
        now = utcnow()
        values = []
        for row in rows:
            row.created_at = row.created_at or now
            row.updated_at = row.updated_at or row.created_at
            values.append({key: getattr(row, key) for key in _MESSAGE_COLUMNS})
        result = await self.session.execute(
            insert(orm.Message).values(values).returning(orm.Message.id, orm.Message.sequence_id)
        )
        sequence = dict(result.tuples().all())
        for row in rows:
            row.sequence_id = sequence[row.id]

    async def set_last_stop_reason(self, agent_id: str, stop_reason: str) -> None:
        await self.session.execute(
            update(orm.Agent)
            .where(orm.Agent.id == agent_id, orm.Agent.last_stop_reason.is_distinct_from(stop_reason))
            .values(last_stop_reason=stop_reason)
        )

    async def append_message_ids(self, agent_id: str, message_ids: Sequence[str]) -> list[str]:
        """Append to the agent's in-context list atomically; returns the whole list."""
        result = await self.session.scalar(
            update(orm.Agent)
            .where(orm.Agent.id == agent_id)
            .values(message_ids=orm.Agent.message_ids.op("||")(literal(list(message_ids), ARRAY(String))))
            .returning(orm.Agent.message_ids)
        )
        return list(result or [])

    async def save_block(self, agent_id: str, block: orm.Block) -> None:
        """Write a block's value, label and description (and the label copy on its attachment)."""
        await self.session.execute(
            update(orm.Block)
            .where(orm.Block.id == block.id)
            .values(value=block.value, label=block.label, description=block.description)
        )
        await self.session.execute(
            update(orm.BlockAgent)
            .where(orm.BlockAgent.block_id == block.id, orm.BlockAgent.agent_id == agent_id)
            .values(block_label=block.label)
        )

    async def attach_new_block(self, agent_id: str, block: orm.Block, position: int) -> None:
        self.session.add(block)
        await self.session.flush()
        self.session.add(
            orm.BlockAgent(agent_id=agent_id, block_id=block.id, block_label=block.label, position=position)
        )
        await self.session.flush()

    async def detach_block(self, agent_id: str, block_id: str) -> None:
        await self.session.execute(
            delete(orm.BlockAgent).where(orm.BlockAgent.agent_id == agent_id, orm.BlockAgent.block_id == block_id)
        )

    async def search_messages(
        self,
        agent_id: str | None,
        *,
        query: str | None,
        roles: Sequence[str] | None,
        start: Any | None,
        end: Any | None,
        limit: int,
        organization_id: str | None = None,
        conversation_id: str | None = None,
    ) -> list[orm.Message]:
        """Messages matching `query` (case-insensitive substring of their text), newest first.

        Scoped to `agent_id` and/or `organization_id` (the API's organization-wide search passes no agent);
        `roles` defaults to user and assistant (conversation_search's default). Calls to conversation_search
        itself are never results, as in Letta.
        """
        stmt = select(orm.Message).where(orm.Message.role.in_(list(roles or ["user", "assistant"])))
        if agent_id is not None:
            stmt = stmt.where(orm.Message.agent_id == agent_id)
        if organization_id is not None:
            stmt = stmt.where(orm.Message.organization_id == organization_id)
        if conversation_id is not None:
            stmt = stmt.where(orm.Message.conversation_id == conversation_id)
        if query:
            stmt = stmt.where(_MATCHES_TEXT.bindparams(q=f"%{escape_like(query)}%"))
        if start is not None:
            stmt = stmt.where(orm.Message.created_at >= start)
        if end is not None:
            stmt = stmt.where(orm.Message.created_at <= end)
        stmt = stmt.order_by(orm.Message.sequence_id.desc()).limit(limit * 4)
        rows = [r for r in await self.session.scalars(stmt) if not _is_search_call(r)]
        return rows[:limit]


# Match the text parts (and, for V2 agents, send_message arguments), not the JSON keys around them.
# A row without content may hold JSON null rather than SQL NULL, hence the jsonb_typeof guard.
_MATCHES_TEXT = text(
    "(EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(messages.content) = 'array' "
    "THEN messages.content ELSE '[]'::jsonb END) AS part "
    "WHERE part->>'text' ILIKE :q) OR COALESCE(messages.tool_calls::text, '') ILIKE :q)"
)


def _is_search_call(row: orm.Message) -> bool:
    return any((c.get("function") or {}).get("name") == "conversation_search" for c in row.tool_calls or [])
