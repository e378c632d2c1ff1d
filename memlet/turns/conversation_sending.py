"""Sending to a conversation (or an agent's default thread) through the one `SendService` and the one loop.

`ConversationSendService` only sets what differs: the thread the run belongs to (`conversation_id`: the loop then
uses the conversation's window, system message and isolated blocks), the conversation's own model, and admission:
one turn at a time per thread. The check runs in the run row's own transaction under a per-thread transaction
lock, so of two concurrent sends exactly one gets the run and the other Letta's 409 busy body naming it (Letta
needs Redis for this; memlet uses Postgres).
"""

from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.actor import Actor
from memlet.conversations.repository import ConversationRepository
from memlet.conversations.service import Thread
from memlet.db.locks import agent_xact_lock
from memlet.errors import AgentBusyError
from memlet.loop.deps import LoopDeps
from memlet.messages.requests import LettaRequest
from memlet.providers.catalog import ModelCatalog
from memlet.runs.repository import RunRepository
from memlet.turns.registry import TurnRegistry
from memlet.turns.sending import SendService

DEFAULT_WINDOW = 128_000


class ConversationSendService(SendService):
    def __init__(
        self, deps: LoopDeps, actor: Actor, turns: TurnRegistry, catalog: ModelCatalog | None, thread: Thread
    ) -> None:
        super().__init__(deps, actor, turns, catalog)
        self.thread = thread
        self.conversation_id = thread.conversation.id if thread.conversation else None
        self.admit = self._admit

    async def _admit(self, session: AsyncSession) -> None:
        """In the run row's transaction: 409 when the thread has an active run (the lock orders the checkers)."""
        await agent_xact_lock(session, f"{self.thread.key}:admit")
        active = await RunRepository(session).active_in_thread(self.thread.agent.id, self.conversation_id, limit=1)
        if active:
            raise AgentBusyError(self.thread.key, active[0])

    async def touch(self) -> None:
        """A conversation's `last_message_at` is set when a request arrives (as in Letta, even if a 409 follows)."""
        if self.conversation_id is None:
            return
        async with self.deps.sessionmaker() as session, session.begin():
            await ConversationRepository(session).touch(self.conversation_id, datetime.now(UTC))

    async def model_override(self, req: LettaRequest) -> dict[str, Any] | None:
        """`override_model` wins; else the conversation's model and settings, keeping the agent's window."""
        conversation = self.thread.conversation
        if req.override_model or conversation is None or self.catalog is None:
            return await super().model_override(req)
        if not conversation.model and not conversation.model_settings:
            return None
        llm_config = self.thread.agent.llm_config or {}
        window = int(llm_config.get("context_window") or DEFAULT_WINDOW)
        if conversation.context_window_limit:
            window = min(window, conversation.context_window_limit)
        handle = conversation.model or str(llm_config.get("handle") or "")
        async with self.deps.sessionmaker() as session:
            return await self.catalog.resolve_llm(
                session,
                self.actor.organization_id,
                handle,
                context_window_limit=window,
                model_settings=conversation.model_settings,
            )
