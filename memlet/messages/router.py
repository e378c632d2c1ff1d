"""``/v1/messages``: one message by id, the organization-wide message listing, and message search."""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from memlet.api.validators import PageLimit
from memlet.ids import MessageId
from memlet.messages.deps import MessageSearchServiceDep, MessageServiceDep
from memlet.messages.schemas import LettaMessage, MessageType
from memlet.messages.search import MessageListResult, SearchAllMessagesRequest
from memlet.messages.service import HistoryQuery

router = APIRouter(prefix="/messages", tags=["messages"])


@router.get("/", operation_id="list_all_messages", response_model=list[LettaMessage])
async def list_all_messages(
    service: MessageServiceDep,
    before: str | None = None,
    after: str | None = None,
    limit: PageLimit = 100,
    order: Literal["asc", "desc"] | None = None,
    conversation_id: str | None = None,
    include_return_message_types: Annotated[list[MessageType] | None, Query()] = None,
) -> Any:
    """List messages across all of the organization's agents (no `order`: the newest, oldest first)."""
    query = HistoryQuery(
        before=before,
        after=after,
        limit=limit,
        order=order,
        conversation_id=conversation_id,
        include_return_message_types=include_return_message_types,
    )
    return await service.list_all(query)


@router.post("/search", operation_id="search_all_messages", response_model=list[MessageListResult])
async def search_all_messages(body: SearchAllMessagesRequest, service: MessageSearchServiceDep) -> Any:
    """Hybrid (full-text + vector where messages have vectors) search over the organization's messages, shown as
    public messages, best first."""
    return await service.search_all(body)


@router.get("/{message_id}", operation_id="retrieve_message", response_model=list[LettaMessage])
async def retrieve_message(message_id: MessageId, service: MessageServiceDep) -> Any:
    """Get one stored message as its public views (one row can show as several messages)."""
    return await service.retrieve(message_id)
