"""Messages of the whole organization: ``GET /v1/messages/`` and ``GET /v1/messages/{message_id}``.

An agent's own history (list, reset, recompile, cancel) is `turns/agent_messages.py`, above the loop.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.actor import Actor
from memlet.db import models as orm
from memlet.db.loaded import model_input
from memlet.db.pagination import Order, Page
from memlet.messages.repository import MessageRepository
from memlet.messages.schemas import LettaMessage, MessageType, StoredMessage
from memlet.messages.views import filter_message_types, to_letta_messages


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
        [StoredMessage.model_validate(model_input(row)) for row in rows],
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
        """Every public view of one stored message, shown raw (no send_message unwrapping) and last part first
        (e.g. a tool call before the reasoning that led to it), as Letta's default conversion does."""
        row = await self.messages.get_or_404(self.actor.organization_id, message_id)
        views = to_letta_messages(
            [StoredMessage.model_validate(model_input(row))], use_assistant_message=False, text_is_assistant=False
        )
        return views[::-1]
