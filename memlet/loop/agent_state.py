"""What one step of the loop reads and writes, through the domain repositories (the loop owns no SQL).

Loading is two statements on the driver (`db/driver`; rows made detached ORM instances by `db/row_shape`): the
agent with its blocks and tools (`AgentRepository.find_with_memory`; in a conversation, with the conversation and its
isolated blocks: `ConversationRepository.find_with_agent`), then the in-context messages: through the process'
`WindowCache` when the loop has one (only rows changed since the thread's last load are read in full). A turn's first
load also starts its run in the first statement (`load_and_start`). The agent, blocks and tools are detached ORM
instances that never enter the session: memory edits are written back by explicit statements
(`loop/commit._write_memory`). The in-context messages are plain read-only `MessageRow`s: the loop reads all of them
every step and writes none back.
"""

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.agents.repository import WITH_MEMORY_READ, AgentRepository, AgentWithMemory, with_memory
from memlet.blocks.repository import BlockRepository
from memlet.conversations.repository import WITH_AGENT_READ, ConversationRepository, with_agent, with_isolated
from memlet.db import models as orm
from memlet.db.message_row import MessageRow
from memlet.errors import NotFoundError
from memlet.loop.buffer_chat import BufferChat
from memlet.loop.window_cache import WindowCache
from memlet.messages.repository import MessageRepository
from memlet.runs.repository import RunRepository
from memlet.runs.run_statements import RunStart
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
    # The thread's converted buffer kept between turns, when the rows were read through a `WindowCache`.
    chat: BufferChat | None = None


class LoopRepository:
    """The repositories a step uses, on one session. Never commits; the caller owns the transaction."""

    def __init__(self, session: AsyncSession, window_cache: WindowCache | None = None) -> None:
        self.session = session
        self.window_cache = window_cache
        self.agents = AgentRepository(session)
        self.messages = MessageRepository(session)
        self.blocks = BlockRepository(session)
        self.tools = ToolRepository(session)
        self.conversations = ConversationRepository(session)
        self.runs = RunRepository(session)

    async def load_state(
        self, agent_id: str, organization_id: str, conversation_id: str | None = None
    ) -> LoopState | None:
        """The agent and what its next step needs, or None for an unknown agent (or conversation)."""
        if conversation_id is None:
            loaded = await self.agents.find_with_memory(organization_id, agent_id)
            return None if loaded is None else await self._state(loaded)
        found = await self.conversations.find_with_agent(organization_id, conversation_id, agent_id)
        return None if found is None else await self._state(*found)

    async def load_and_start(
        self, agent_id: str, organization_id: str, conversation_id: str | None, start: RunStart
    ) -> tuple[LoopState | None, str]:
        """`load_state`, with the turn's run started in the statement that reads the agent (`RunRepository.
        read_and_start`; the run is started even when the agent is gone); the run's status after the start."""
        params = {"agent_id": agent_id, "org_id": organization_id}
        if conversation_id is None:
            row, status = await self.runs.read_and_start(WITH_MEMORY_READ, params, start)
            return (None if row is None else await self._state(with_memory(row))), status
        params["conversation_id"] = conversation_id
        row, status = await self.runs.read_and_start(WITH_AGENT_READ, params, start)
        return (None if row is None else await self._state(*with_agent(row))), status

    async def clear_buffer(self, state: LoopState) -> None:
        """`message_buffer_autoclear`: the turn starts from the thread's system message alone, as in Letta, whose
        window becomes the system message and this turn's messages (the rest stay in recall memory). Not while an
        approval request waits: its answer goes on with the turn that asked (Letta cleared it and then refused the
        answer)."""
        if len(state.messages) < 2:
            return
        last = state.messages[-1]
        if last.role == "approval" and last.tool_calls:
            return
        keep = [state.messages[0].id]
        if state.conversation is not None:
            await self.conversations.set_message_ids(state.conversation, keep)
        else:
            await self.agents.set_message_ids(state.agent, keep)
        state.messages, state.chat = state.messages[:1], None

    async def _state(
        self,
        loaded: AgentWithMemory,
        conversation: orm.Conversation | None = None,
        isolated: list[orm.Block] | None = None,
    ) -> LoopState:
        """The state of a loaded agent (in `conversation`, with its `isolated` blocks), its window read."""
        agent, blocks, window = loaded.agent, loaded.blocks, loaded.agent.message_ids or []
        if conversation is not None:
            blocks, window = with_isolated(blocks, isolated or []), conversation.message_ids or []
        if self.window_cache is None:
            messages, chat = await self.messages.in_context(agent.id, window), None
        else:
            key = conversation.id if conversation is not None else agent.id
            messages, chat = await self.window_cache.load(self.messages, key, agent.id, window)
        return LoopState(
            agent=agent, blocks=blocks, tools=loaded.tools, messages=messages, conversation=conversation, chat=chat
        )

    async def load_state_or_404(
        self, agent_id: str, organization_id: str, conversation_id: str | None = None
    ) -> LoopState:
        """`load_state` for routes: an unknown agent or conversation is a 404."""
        return found_or_404(
            await self.load_state(agent_id, organization_id, conversation_id), agent_id, conversation_id
        )


def found_or_404(state: LoopState | None, agent_id: str, conversation_id: str | None) -> LoopState:
    """A loaded state, or the 404 for the conversation (when there is one) or the agent."""
    if state is None:
        if conversation_id is not None:
            raise NotFoundError("Conversation", conversation_id)
        raise NotFoundError("Agent", agent_id)
    return state
