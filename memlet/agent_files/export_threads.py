"""The messages an export carries for one agent: one thread's whole history, and that thread's in-context window.

With no `conversation_id` (or `default`, or the agent's own id) the thread is the agent's own, as in Letta: its
messages outside every conversation (all of them, in context or not) and its `message_ids`. With a conversation of the agent it is that conversation, as Letta exports it with the conversation's
in-context list: its history (the rows it links, its own and those it shares with the thread it was forked from)
and its window (`conversations.message_ids`, its own system message first). Importing the file gives the new agent
that conversation's context. A conversation of another agent, or none, is a 404.

An in-context row the history lacks is added, so every in-context id names a message of the file.
"""

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.conversations.repository import ConversationRepository
from memlet.conversations.service import DEFAULT
from memlet.db import models as orm
from memlet.db.pagination import Page
from memlet.errors import NotFoundError
from memlet.messages.repository import MessageRepository


@dataclass
class Thread:
    messages: list[orm.Message]  # oldest first, the window's system message at the top
    in_context: list[str]  # database ids, every one among `messages`


async def thread_of(session: AsyncSession, agent: orm.Agent, conversation_id: str | None) -> Thread:
    messages = MessageRepository(session)
    if conversation_id is None or conversation_id in (DEFAULT, agent.id):
        found = await messages.agent_tail(
            agent.organization_id, agent.id, after=None, before=None, limit=None, conversation_id=DEFAULT
        )
        rows, window = (found[1] if found is not None else []), list(agent.message_ids or [])
    else:
        conversations = ConversationRepository(session)
        conversation = await conversations.find(agent.organization_id, conversation_id)
        if conversation is None or conversation.agent_id != agent.id:
            raise NotFoundError("Conversation", conversation_id)
        window = list(conversation.message_ids or [])
        rows = await conversations.history_page(
            conversation.id, Page(limit=None, order="asc"), group_id=None, system_id=window[0] if window else None
        )
    held = {row.id for row in rows}
    missing = [i for i in window if i not in held]
    if missing:
        first = window[0]
        rows = sorted([*rows, *await messages.by_ids(agent.id, missing)], key=lambda r: (r.id != first, r.sequence_id))
    exported = {row.id for row in rows}
    return Thread(rows, [i for i in window if i in exported])
