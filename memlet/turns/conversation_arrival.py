"""What a send to a thread reads, and writes, when it arrives: one statement, in autocommit.

A conversation send (what Letta Code sends every turn) needs, before its run row: the conversation and its agent
(404 for either), the agent's type and sleeptime group (how replies are shown, what the turn's inputs carry), the
thread's active run (Letta's 409 busy body names it), the run an earlier try with the same otids started (a retry
attaches to it) and, for a conversation, `last_message_at` set (as in Letta, even when a 409 follows). These were
six statements; here they are one: the touch as a data-modifying CTE, the reads as a join and scalar subqueries.
The default thread (`default` + `agent_id`, or an agent id) is the same without a conversation to touch.
"""

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, String, bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet.actor import Actor
from memlet.agents.repository import AGENT_ROWS
from memlet.conversations.repository import CONVERSATION_ROWS
from memlet.conversations.service import DEFAULT, Thread, default_not_found
from memlet.db import models as orm
from memlet.db.driver import DriverSQL, lone_statements
from memlet.errors import NotFoundError
from memlet.groups.repository import GroupRepository
from memlet.ids import Prefix
from memlet.runs.repository import active_in_thread_query, by_request_query
from memlet.turns.chunk_log import RETENTION

A = orm.Agent
C = orm.Conversation
_ORG = bindparam("org_id", type_=String)
_TOKEN = bindparam("token", type_=String)
_SINCE = bindparam("since", type_=DateTime(timezone=True))


def _runs(agent_id: Any, conversation_id: Any) -> tuple[Any, Any]:
    """The thread's newest active run and the run of an earlier try with the request's token (scalar subqueries)."""
    active = active_in_thread_query(agent_id, conversation_id, limit=1).scalar_subquery()
    earlier = by_request_query(_ORG, agent_id, _TOKEN, _SINCE).scalar_subquery()
    return active, earlier


def _conversation_statement() -> DriverSQL:
    touched = (
        update(C)
        .where(C.id == bindparam("conversation_id"), C.organization_id == _ORG)
        .values(last_message_at=bindparam("now", type_=DateTime(timezone=True)))
        .returning(C.id)
        .cte("touched")
    )
    return DriverSQL(
        select(
            *CONVERSATION_ROWS.columns,
            *AGENT_ROWS.columns,
            GroupRepository.active_sleeptime_group(),
            *_runs(A.id, C.id),
        )
        .join_from(C, A, A.id == C.agent_id)
        .where(C.id == bindparam("conversation_id"), C.organization_id == _ORG)
        .add_cte(touched)
    )


# The conversation's row is read before the touch (its snapshot), as the separate reads did.
_CONVERSATION = _conversation_statement()
_AGENT = DriverSQL(
    select(*AGENT_ROWS.columns, GroupRepository.active_sleeptime_group(), *_runs(A.id, None)).where(
        A.id == bindparam("agent_id"), A.organization_id == _ORG
    )
)


@dataclass(frozen=True)
class Arrival:
    thread: Thread
    agent_type: str
    sleeptime_group: str | None  # the agent's active sleeptime group (its inputs carry the id)
    active_run_id: str | None  # the thread's newest created/running run
    token: str | None  # the request's retry token (`send_request.request_identity`)
    earlier_run_id: str | None  # the run an earlier request with the same token started, within the retention


async def arrive(
    maker: async_sessionmaker[AsyncSession],
    actor: Actor,
    conversation_id: str,
    agent_id: str | None,
    token: str | None,
) -> Arrival:
    """Resolve a send's thread (`conv-…`, `default` + `agent_id`, or an agent id; 404 for an unknown one), touch a
    conversation and read what its admission needs, in one statement."""
    params: dict[str, Any] = {
        "org_id": actor.organization_id,
        "token": token,
        "since": datetime.now(UTC) - RETENTION,
    }
    if conversation_id == DEFAULT or conversation_id.startswith(f"{Prefix.AGENT}-"):
        if conversation_id == DEFAULT and not agent_id:
            raise default_not_found(conversation_id)
        thread_agent = conversation_id if conversation_id != DEFAULT else str(agent_id)
        async with lone_statements(maker) as driver:
            row = await driver.fetchrow(_AGENT, params | {"agent_id": thread_agent})
        if row is None:
            raise NotFoundError("Agent", thread_agent)
        conversation, rest = None, row
    else:
        params |= {"conversation_id": conversation_id, "now": datetime.now(UTC)}
        async with lone_statements(maker) as driver:
            row = await driver.fetchrow(_CONVERSATION, params)
        if row is None:
            raise NotFoundError("Conversation", conversation_id)
        conversation = CONVERSATION_ROWS.detached(row)
        rest = row[len(CONVERSATION_ROWS) :]
    agent = AGENT_ROWS.detached(rest)
    group, active, earlier = rest[len(AGENT_ROWS) :]
    return Arrival(Thread(agent, conversation), str(agent.agent_type), group, active, token, earlier)
