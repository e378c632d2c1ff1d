"""What one step of the loop reads and writes, through the domain repositories (the loop owns no SQL).

Loading is two statements on the driver (`db/driver`; rows made detached ORM instances by `db/row_shape`): the
agent with its blocks and tools (`AgentRepository.find_with_memory`; in a conversation, with the conversation and its
isolated blocks: `ConversationRepository.find_with_agent`), then the in-context messages. The agent, blocks and tools are detached ORM instances that never enter the session:
memory edits are written back by explicit statements (`loop/commit._write_memory`). The in-context messages are
plain read-only `MessageRow`s: the loop reads all of them every step and writes none back.
"""

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.agents.repository import AgentRepository
from memlet.blocks.repository import BlockRepository
from memlet.conversations.repository import ConversationRepository, with_isolated
from memlet.db import models as orm
from memlet.db.message_row import MessageRow
from memlet.errors import NotFoundError
from memlet.messages.repository import MessageRepository
from memlet.tools.repository import ToolRepository


@dataclass
class LoopState:
    """Everything one step reads: the agent row, its blocks (attachment order), tools and in-context messages."""

    agent: orm.Agent
    blocks: list[orm.Block]
    tools: list[orm.Tool]
    messages: list[MessageRow]  # message_ids order, the system message first
    # The conversation the turn runs in: `messages` is its window, its isolated blocks replace the agent's.
    conversation: orm.Conversation | None = None


class LoopRepository:
    """The repositories a step uses, on one session. Never commits; the caller owns the transaction."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session
        self.agents = AgentRepository(session)
        self.messages = MessageRepository(session)
        self.blocks = BlockRepository(session)
        self.tools = ToolRepository(session)
        self.conversations = ConversationRepository(session)

    async def load_state(
        self, agent_id: str, organization_id: str, conversation_id: str | None = None
    ) -> LoopState | None:
        """The agent and what its next step needs, or None for an unknown agent (or conversation)."""
        conversation = None
        if conversation_id is None:
            loaded = await self.agents.find_with_memory(organization_id, agent_id)
            if loaded is None:
                return None
            blocks, window = loaded.blocks, loaded.agent.message_ids or []
        else:
            found = await self.conversations.find_with_agent(organization_id, conversation_id, agent_id)
            if found is None:
                return None
            loaded, conversation, isolated = found
            blocks, window = with_isolated(loaded.blocks, isolated), conversation.message_ids or []
        agent = loaded.agent
        return LoopState(
            agent=agent,
            blocks=blocks,
            tools=loaded.tools,
            messages=await self.messages.in_context(agent.id, window),
            conversation=conversation,
        )

    async def load_state_or_404(
        self, agent_id: str, organization_id: str, conversation_id: str | None = None
    ) -> LoopState:
        """`load_state` for routes: an unknown agent or conversation is a 404."""
        state = await self.load_state(agent_id, organization_id, conversation_id)
        if state is None:
            if conversation_id is not None:
                raise NotFoundError("Conversation", conversation_id)
            raise NotFoundError("Agent", agent_id)
        return state
