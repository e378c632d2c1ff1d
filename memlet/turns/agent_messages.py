"""An agent's message history: list it, reset it, recompile its system message, cancel its runs."""

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.actor import Actor
from memlet.agents.initial_messages import default_sequence
from memlet.agents.repository import AgentRepository
from memlet.agents.system_message import refresh_system_message
from memlet.conversations.service import thread_page
from memlet.db import models as orm
from memlet.db.pagination import Page
from memlet.errors import BadRequestError, ConflictError, NotFoundError
from memlet.loop.cancel import cancel_runs
from memlet.messages.repository import MessageRepository
from memlet.messages.schemas import LettaMessage
from memlet.messages.service import HistoryQuery, views_in_order
from memlet.runs.repository import RunFilters, RunRepository
from memlet.runs.schemas import ACTIVE_STATUSES


class AgentMessageService:
    def __init__(self, session: AsyncSession, actor: Actor) -> None:
        self.session = session
        self.actor = actor
        self.messages = MessageRepository(session)
        self.agents = AgentRepository(session)

    async def agent(self, agent_id: str, *, for_update: bool = False) -> orm.Agent:
        agent = await self.agents.get_or_404(self.actor.organization_id, agent_id, for_update=for_update)
        return agent

    async def list_for_agent(self, agent_id: str, query: HistoryQuery) -> list[LettaMessage]:
        """An agent's history (every stored message, in context or not)."""
        org_id = self.actor.organization_id
        filters = {"group_id": query.group_id, "conversation_id": query.conversation_id}
        if query.before or query.after:  # the agent's 404 comes before a cursor's
            if await self.agents.agent_type(org_id, agent_id) is None:
                raise NotFoundError("Agent", agent_id)
            await self.messages.ensure_cursors(agent_id, query.before, query.after)
        if query.order is None:
            found = await self.messages.agent_tail(
                org_id, agent_id, after=query.after, before=query.before, limit=query.limit, **filters
            )
            if found is None:
                raise NotFoundError("Agent", agent_id)
            agent_type, rows = found
        else:
            known = await self.agents.agent_type(org_id, agent_id)
            if known is None:
                raise NotFoundError("Agent", agent_id)
            agent_type = known
            # `before` is the older side whatever the order, as Letta compares it; `after` follows the order.
            page = thread_page(query.before, query.after, query.limit, query.order)
            rows = await self.messages.page_for_agent(agent_id, page, **filters)
        newest_first = query.order == "desc"
        ordered = rows[::-1] if newest_first else rows
        # Letta shows plain assistant text as the reply only for letta_v1 agents in history listings.
        return views_in_order(
            ordered, query, text_is_assistant=agent_type == "letta_v1_agent", newest_first=newest_first
        )

    async def reset(self, agent_id: str, *, add_default_initial_messages: bool) -> None:
        """Empty the context window except the system message; stored messages stay (recall memory)."""
        agent = await self.agent(agent_id, for_update=True)
        if not agent.message_ids:
            raise BadRequestError(f"Agent {agent_id} has no message_ids - cannot preserve system message")
        agent.message_ids = [agent.message_ids[0]]
        agent.last_updated_by_id = self.actor.user_id
        await self.session.flush()
        await refresh_system_message(self.session, agent, update_timestamp=True, with_rules=True)
        if add_default_initial_messages:
            rows = self._initial_rows(agent)
            await self.messages.add(rows)
            agent.message_ids = [*agent.message_ids, *(r.id for r in rows)]
            await self.session.flush()

    def _initial_rows(self, agent: orm.Agent) -> list[orm.Message]:
        return default_sequence(agent, self.actor.user_id)

    async def recompile(self, agent_id: str, *, update_timestamp: bool, dry_run: bool) -> str:
        """Rebuild the system message from the current memory; ``dry_run`` computes it without saving."""
        agent = await self.agent(agent_id, for_update=True)
        if not agent.message_ids:
            raise NotFoundError("Message", message=f"No system message found for agent '{agent_id}'")
        if not dry_run:
            return await refresh_system_message(self.session, agent, update_timestamp=update_timestamp, with_rules=True)
        savepoint = await self.session.begin_nested()
        try:
            return await refresh_system_message(self.session, agent, update_timestamp=update_timestamp, with_rules=True)
        finally:
            await savepoint.rollback()

    async def cancel(self, agent_id: str, run_ids: Sequence[str] | None) -> dict[str, str]:
        """Cancel the given runs, or the agent's active ones; the loop stops at its next step boundary.

        The agent must be the actor's: another organization gets a 404 and cancels nothing.
        """
        await self.agents.get_or_404(self.actor.organization_id, agent_id)
        runs = RunRepository(self.session)
        if not run_ids:
            active = await runs.list_runs(
                self.actor.organization_id,
                RunFilters(agent_ids=[agent_id], statuses=ACTIVE_STATUSES),
                Page(limit=100, order="desc"),
            )
            run_ids = [run.id for run in active]
        if not run_ids:
            raise ConflictError(f"CONFLICT: No active runs to cancel for agent {agent_id}")
        # Unknown runs are reported "failed", ended ones "cancelled" (as Letta); a pending approval is denied.
        return await cancel_runs(self.session, agent_id, list(run_ids))
