"""Sending to a conversation (or an agent's default thread) through the one `SendService` and the one loop.

`ConversationSendService` only sets what differs: the conversation the run belongs to (the loop then uses its
window, system message and isolated blocks), the conversation's own model, and admission, one turn at a time per
thread, answered with Letta's 409 busy body naming the active run (Letta needs Redis for this; memlet uses
Postgres). A send's arrival statement (`conversation_arrival`) reads the thread's active run; for a conversation, a
partial unique index on runs (`ux_runs_active_conversation`) also refuses the second of two racing inserts. The
default thread shares the agent's lock key, which the loop takes (a racing default-thread send fails on that lock).
"""

from typing import Any

from sqlalchemy.exc import IntegrityError

from memlet.actor import Actor
from memlet.conversations.service import Thread
from memlet.db import models as orm
from memlet.db.engine import single_read
from memlet.errors import AgentBusyError
from memlet.loop.deps import LoopDeps
from memlet.messages.requests import LettaRequest
from memlet.providers.catalog import ModelCatalog
from memlet.runs.repository import RunRepository
from memlet.turns.conversation_arrival import Arrival
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
        self._earlier: tuple[str, str | None] | None = None  # the arrival's (token, earlier run id)

    async def _active_run(self) -> str | None:
        async with single_read(self.deps.sessionmaker) as session:  # one SELECT: no BEGIN and ROLLBACK
            active = await RunRepository(session).active_in_thread(self.thread.agent.id, self.conversation_id, limit=1)
        return active[0] if active else None

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

    def arrived(self, arrival: Arrival) -> None:
        """Take what the send's arrival statement read (`conversation_arrival.arrive`): a busy thread is a 409,
        unless the request repeats an earlier one (same otids), which `open_stream` attaches to that run's stream
        (Letta looks for the earlier run before it takes the lock); the agent's type and sleeptime group, and the
        run an earlier try started, need no statement of their own."""
        retry = arrival.token is not None and arrival.earlier_run_id is not None
        if arrival.active_run_id is not None and not retry:
            raise AgentBusyError(self.thread.key, arrival.active_run_id)
        self._agents[self.thread.agent.id] = (arrival.agent_type, arrival.sleeptime_group)
        self._earlier = (arrival.token, arrival.earlier_run_id) if arrival.token else None

    async def retried(self, agent_id: str, token: str) -> str | None:
        """The arrival's answer the first time; a second look (after a racing insert) reads again."""
        if self._earlier is not None and self._earlier[0] == token:
            earlier, self._earlier = self._earlier[1], None
            return earlier
        return await super().retried(agent_id, token)

    async def model_override(self, req: LettaRequest) -> dict[str, Any] | None:
        """`override_model` wins; else the conversation's model with its settings, keeping the agent's window.
        Settings without a model change nothing (Letta applies them only with the conversation's model)."""
        conversation = self.thread.conversation
        if req.override_model or conversation is None or self.catalog is None:
            return await super().model_override(req)
        llm_config = self.thread.agent.llm_config or {}
        window = int(llm_config.get("context_window") or DEFAULT_WINDOW)
        if conversation.context_window_limit:
            window = min(window, conversation.context_window_limit)
        if not conversation.model:
            return {"context_window": window} if conversation.context_window_limit else None
        async with self.deps.sessionmaker() as session:
            return await self.catalog.resolve_llm(
                session,
                self.actor.organization_id,
                conversation.model,
                context_window_limit=window,
                model_settings=conversation.model_settings,
            )
