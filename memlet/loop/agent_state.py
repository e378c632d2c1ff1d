"""What one step of the loop reads and writes, through the domain repositories (the loop owns no SQL).

Loading is three queries (agent + in-context messages, blocks, tools); the loop then closes its transaction and
works on these detached rows (sessions use expire_on_commit=False).
"""

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.agents.repository import AgentRepository
from memlet.blocks.repository import BlockRepository
from memlet.db import models as orm
from memlet.errors import NotFoundError
from memlet.messages.repository import MessageRepository
from memlet.tools.repository import ToolRepository


@dataclass
class LoopState:
    """Everything one step reads: the agent row, its blocks (attachment order), tools and in-context messages."""

    agent: orm.Agent
    blocks: list[orm.Block]
    tools: list[orm.Tool]
    messages: list[orm.Message]  # message_ids order, the system message first


class LoopRepository:
    """The repositories a step uses, on one session. Never commits; the caller owns the transaction."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session
        self.agents = AgentRepository(session)
        self.messages = MessageRepository(session)
        self.blocks = BlockRepository(session)
        self.tools = ToolRepository(session)

    async def load_state(self, agent_id: str, organization_id: str) -> LoopState | None:
        """The agent and what its next step needs, or None for an unknown agent."""
        agent = await self.agents.find(organization_id, agent_id)
        if agent is None:
            return None
        messages = await self.messages.by_ids(agent.id, agent.message_ids or [])
        return LoopState(
            agent=agent,
            blocks=await self.blocks.of_agent(agent_id),
            tools=await self.tools.of_agent(agent_id),
            messages=messages,
        )

    async def load_state_or_404(self, agent_id: str, organization_id: str) -> LoopState:
        """`load_state` for routes: an unknown agent is a 404."""
        state = await self.load_state(agent_id, organization_id)
        if state is None:
            raise NotFoundError("Agent", agent_id)
        return state
