"""Message history and in-context housekeeping: list, retrieve, reset, recompile, cancel.

History listings follow Letta's quirk when no ``order`` is given: the newest ``limit`` rows, returned oldest
first. With an explicit ``order`` the rows come in that order with sort-relative cursors, so letta-client's
auto-pagination returns every message exactly once either way.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.agents.initial_messages import boot_sequence
from memlet.agents.repository import AgentRepository
from memlet.db import models as orm
from memlet.db.pagination import Order, Page
from memlet.errors import BadRequestError, ConflictError, NotFoundError
from memlet.loop.cancel import cancel_runs
from memlet.loop.context import refresh_system_message
from memlet.messages.packing import pack_login_event
from memlet.messages.repository import MessageRepository
from memlet.messages.schemas import LettaMessage, MessageType, StoredMessage
from memlet.messages.views import filter_message_types, to_letta_messages
from memlet.runs.repository import RunFilters, RunRepository
from memlet.runs.schemas import ACTIVE_STATUSES

# Agent types whose reset (with default messages) starts with a login event only, or with nothing at all.
_LOGIN_ONLY_TYPES = frozenset({"sleeptime_agent"})
_NO_INITIAL_TYPES = frozenset({"letta_v1_agent"})


@dataclass(frozen=True)
class HistoryQuery:
    """The query parameters of ``GET /v1/agents/{agent_id}/messages`` (and the org-wide listing)."""

    before: str | None = None
    after: str | None = None
    limit: int | None = 100
    order: Order | None = None
    group_id: str | None = None
    conversation_id: str | None = None
    use_assistant_message: bool = True
    assistant_message_tool_name: str = "send_message"
    assistant_message_tool_kwarg: str = "message"
    include_err: bool | None = None
    include_return_message_types: Sequence[MessageType] | None = None


def views_in_order(
    rows: Sequence[orm.Message], query: HistoryQuery, *, text_is_assistant: bool, newest_first: bool
) -> list[LettaMessage]:
    """Public views of rows given oldest first; reversed as a whole (parts too) when newest-first is asked."""
    views = to_letta_messages(
        [StoredMessage.model_validate(row) for row in rows],
        use_assistant_message=query.use_assistant_message,
        assistant_message_tool_name=query.assistant_message_tool_name,
        assistant_message_tool_kwarg=query.assistant_message_tool_kwarg,
        text_is_assistant=text_is_assistant,
        include_err=query.include_err,
    )
    views = filter_message_types(views, query.include_return_message_types)
    return views[::-1] if newest_first else views


class MessageService:
    def __init__(self, session: AsyncSession, actor: Actor) -> None:
        self.session = session
        self.actor = actor
        self.messages = MessageRepository(session)
        self.agents = AgentRepository(session)

    async def agent(self, agent_id: str, *, for_update: bool = False) -> orm.Agent:
        agent = await self.agents.find(self.actor.organization_id, agent_id, for_update=for_update)
        if agent is None:
            raise NotFoundError("Agent", agent_id)
        return agent

    async def list_for_agent(self, agent_id: str, query: HistoryQuery) -> list[LettaMessage]:
        """An agent's history (every stored message, in context or not)."""
        agent_type = await self.agents.agent_type(self.actor.organization_id, agent_id)
        if agent_type is None:
            raise NotFoundError("Agent", agent_id)
        await self.messages.ensure_cursors(agent_id, query.before, query.after)
        filters = {"group_id": query.group_id, "conversation_id": query.conversation_id}
        if query.order is None:
            rows = await self.messages.tail(
                agent_id, after=query.after, before=query.before, limit=query.limit, **filters
            )
        else:
            page = Page(before=query.before, after=query.after, limit=query.limit, order=query.order)
            rows = await self.messages.page_for_agent(agent_id, page, **filters)
        newest_first = query.order == "desc"
        ordered = rows[::-1] if newest_first else rows
        # Letta shows plain assistant text as the reply only for letta_v1 agents in history listings.
        return views_in_order(
            ordered, query, text_is_assistant=agent_type == "letta_v1_agent", newest_first=newest_first
        )

    async def list_all(self, query: HistoryQuery) -> list[LettaMessage]:
        """Messages of every agent of the organization (Letta treats them all as letta_v1 text replies)."""
        org_id = self.actor.organization_id
        if query.order is None:
            rows = await self.messages.tail_for_org(
                org_id, after=query.after, before=query.before, limit=query.limit, conversation_id=query.conversation_id
            )
        else:
            page = Page(before=query.before, after=query.after, limit=query.limit, order=query.order)
            rows = await self.messages.page_for_org(org_id, page, conversation_id=query.conversation_id)
        newest_first = query.order == "desc"
        return views_in_order(
            rows[::-1] if newest_first else rows, query, text_is_assistant=True, newest_first=newest_first
        )

    async def retrieve(self, message_id: str) -> list[LettaMessage]:
        """Every public view of one stored message, shown raw (no send_message unwrapping), as Letta does."""
        row = await self.messages.find(self.actor.organization_id, message_id)
        if row is None:
            raise NotFoundError("Message", message=f"Message with id {message_id} not found.")
        return to_letta_messages(
            [StoredMessage.model_validate(row)], use_assistant_message=False, text_is_assistant=False
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
        if agent.agent_type in _NO_INITIAL_TYPES:
            return []
        if agent.agent_type in _LOGIN_ONLY_TYPES:
            login = orm.Message(
                id=ids.new_id(ids.Prefix.MESSAGE),
                agent_id=agent.id,
                organization_id=agent.organization_id,
                role="user",
                content=[{"type": "text", "text": pack_login_event(timezone=agent.timezone)}],
                model=(agent.llm_config or {}).get("model"),
                created_by_id=self.actor.user_id,
            )
            return [login]
        return boot_sequence(agent)

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
        """Cancel the given runs, or the agent's active ones; the loop stops at its next step boundary."""
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
