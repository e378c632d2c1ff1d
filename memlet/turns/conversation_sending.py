"""Sending to a conversation (or an agent's default thread) through the one `SendService` and the one loop.

`ConversationSendService` only sets what differs: the conversation the run belongs to (the loop then uses its
window, system message and isolated blocks), the conversation's own model, and admission, one turn at a time per
thread, answered with Letta's 409 busy body naming the active run (Letta needs Redis for this; memlet uses
Postgres). A send first looks for an active run of the thread; for a conversation, a partial unique index on
runs (`ux_runs_active_conversation`) also refuses the second of two racing inserts. The default thread shares
the agent's lock key, which the loop takes (a racing default-thread send fails on that lock).
"""

from datetime import UTC, datetime
from typing import Any

from sqlalchemy.exc import IntegrityError

from memlet.actor import Actor
from memlet.conversations.repository import ConversationRepository
from memlet.conversations.service import Thread
from memlet.db import models as orm
from memlet.db.engine import single_read, single_statement
from memlet.errors import AgentBusyError
from memlet.loop.deps import LoopDeps
from memlet.messages.requests import LettaRequest
from memlet.providers.catalog import ModelCatalog
from memlet.runs.repository import RunRepository, active_in_thread_query
from memlet.turns.registry import TurnRegistry
from memlet.turns.send_request import AfterTurn
from memlet.turns.sending import SendService

DEFAULT_WINDOW = 128_000


class ConversationSendService(SendService):
    checks_agent_in_insert = False

    def __init__(
        self,
        deps: LoopDeps,
        actor: Actor,
        turns: TurnRegistry,
        catalog: ModelCatalog | None,
        thread: Thread,
        sleeptime: AfterTurn | None = None,
    ) -> None:
        super().__init__(deps, actor, turns, catalog, sleeptime)
        self.thread = thread
        self.conversation_id = thread.conversation.id if thread.conversation else None

    async def _active_run(self) -> str | None:
        async with single_read(self.deps.sessionmaker) as session:  # one SELECT: no BEGIN and ROLLBACK
            active = await RunRepository(session).active_in_thread(self.thread.agent.id, self.conversation_id, limit=1)
        return active[0] if active else None

    async def ensure_idle(self) -> None:
        """409 (Letta's busy body) when the thread already has an active run."""
        if (run_id := await self._active_run()) is not None:
            raise AgentBusyError(self.thread.key, run_id)

    async def _insert(self, run: orm.Run) -> None:
        """The run row; a concurrent send that got its row in first makes this one a 409 naming that run."""
        try:
            await super()._insert(run)
        except IntegrityError as exc:
            if "ux_runs_active_conversation" not in str(exc.orig):
                raise
            holder = await self._active_run()
            if holder is None:  # the run that took the slot already ended: name it all the same
                async with self.deps.sessionmaker() as session:
                    holder = await RunRepository(session).lock_holder(self.thread.agent.id, exclude=run.id)
            raise AgentBusyError(self.thread.key, holder) from None

    async def touch_and_ensure_idle(self) -> None:
        """A conversation's `last_message_at` is set when a request arrives (as in Letta, even if a 409 follows),
        then `ensure_idle`: one statement, in autocommit (no BEGIN and COMMIT)."""
        if self.conversation_id is None:
            return await self.ensure_idle()
        active = active_in_thread_query(self.thread.agent.id, self.conversation_id, limit=1)
        async with single_statement(self.deps.sessionmaker) as session:
            run_ids = await ConversationRepository(session).touch(self.conversation_id, datetime.now(UTC), then=active)
        if run_ids:
            raise AgentBusyError(self.thread.key, run_ids[0])

    async def model_override(self, req: LettaRequest) -> dict[str, Any] | None:
        """`override_model` wins; else the conversation's model and settings, keeping the agent's window."""
        conversation = self.thread.conversation
        if req.override_model or conversation is None or self.catalog is None:
            return await super().model_override(req)
        llm_config = self.thread.agent.llm_config or {}
        window = int(llm_config.get("context_window") or DEFAULT_WINDOW)
        if conversation.context_window_limit:
            window = min(window, conversation.context_window_limit)
        if not conversation.model and not conversation.model_settings:
            return {"context_window": window} if conversation.context_window_limit else None
        handle = conversation.model or str(llm_config.get("handle") or "")
        async with self.deps.sessionmaker() as session:
            return await self.catalog.resolve_llm(
                session,
                self.actor.organization_id,
                handle,
                context_window_limit=window,
                model_settings=conversation.model_settings,
            )
