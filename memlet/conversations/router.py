"""``/v1/conversations``: create, list, retrieve, update, delete, fork, and list a thread's messages.

The routes that drive the loop (send, preview, compact, recompile, cancel) are in `memlet.turns.conversation_router`.
"""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query

from memlet.api.validators import PageLimit
from memlet.conversations.deps import ConversationServiceDep
from memlet.conversations.schemas import Conversation, CreateConversation, UpdateConversation
from memlet.db.pagination import Page
from memlet.ids import ConversationId, ThreadId
from memlet.messages.schemas import LettaMessage, MessageType
from memlet.messages.service import HistoryQuery

router = APIRouter(prefix="/conversations", tags=["conversations"])

AgentQuery = Annotated[str | None, Query(description="Agent ID for agent-direct mode with 'default' conversation")]


@router.post("/", operation_id="create_conversation", response_model=Conversation)
async def create_conversation(
    service: ConversationServiceDep,
    agent_id: Annotated[str, Query(description="The agent ID to create a conversation for")],
    body: Annotated[CreateConversation, Body(default_factory=CreateConversation)],
) -> Any:
    """Create a conversation on an agent, with its own system message and optional isolated block copies (the body
    is optional, as in Letta)."""
    return await service.create(agent_id, body)


@router.get("/", operation_id="list_conversations", response_model=list[Conversation])
async def list_conversations(
    service: ConversationServiceDep,
    agent_id: str | None = None,
    limit: Annotated[int, Query(ge=0, le=1000)] = 50,
    after: str | None = None,
    summary_search: str | None = None,
    order: Literal["asc", "desc"] = "desc",
    order_by: Literal["created_at", "last_run_completion", "last_message_at"] = "created_at",
    archive_status: Annotated[Literal["unarchived", "archived", "all"], Query(include_in_schema=False)] = "all",
) -> Any:
    """List conversations (of one agent, or all), with a case-sensitive summary search and sort-relative cursors.

    `archive_status` (sent by newer SDKs) filters on the `archived` flag; absent, every conversation is listed.
    """
    page = Page(after=after, limit=limit, order=order)
    return await service.list_page(
        page, agent_id=agent_id, summary_search=summary_search, order_by=order_by, archive_status=archive_status
    )


@router.get("/{conversation_id}", operation_id="retrieve_conversation", response_model=Conversation)
async def retrieve_conversation(conversation_id: ConversationId, service: ConversationServiceDep) -> Any:
    """Retrieve a conversation, with its in-context message ids."""
    return await service.get(conversation_id)


@router.patch("/{conversation_id}", operation_id="update_conversation", response_model=Conversation)
async def update_conversation(
    conversation_id: ConversationId, body: UpdateConversation, service: ConversationServiceDep
) -> Any:
    """Update a conversation's summary, model, model settings or other fields (only those sent)."""
    return await service.update(conversation_id, body)


@router.delete("/{conversation_id}", operation_id="delete_conversation")
async def delete_conversation(conversation_id: ConversationId, service: ConversationServiceDep) -> Any:
    """Delete a conversation, its isolated blocks and the messages no fork shares."""
    await service.delete(conversation_id)
    return None


@router.post("/{conversation_id}/fork", operation_id="fork_conversation", response_model=Conversation)
async def fork_conversation(
    conversation_id: ThreadId,
    service: ConversationServiceDep,
    agent_id: AgentQuery = None,
    message_id: Annotated[str | None, Query(description="Fork at this message (inclusive)")] = None,
    hidden: bool | None = None,
) -> Any:
    """Fork a conversation: a new one sharing the source's in-context messages, up to `message_id` if given."""
    return await service.fork(conversation_id, agent_id, message_id=message_id, hidden=hidden)


@router.get("/{conversation_id}/messages", operation_id="list_conversation_messages", response_model=list[LettaMessage])
async def list_conversation_messages(
    conversation_id: ThreadId,
    service: ConversationServiceDep,
    agent_id: AgentQuery = None,
    before: str | None = None,
    after: str | None = None,
    limit: PageLimit = 100,
    order: Literal["asc", "desc"] | None = None,
    order_by: Literal["created_at"] = "created_at",
    group_id: str | None = None,
    include_err: bool | None = None,
    include_return_message_types: Annotated[list[MessageType] | None, Query()] = None,
) -> Any:
    """A thread's whole history (in and out of context), newest first by default; `before` is the older side, as in
    Letta, `after` follows the sort order.
    The agent's default thread lists as its history does (no `order`: the newest `limit` messages, oldest first)."""
    query = HistoryQuery(
        before=before,
        after=after,
        limit=limit,
        order=order,
        group_id=group_id,
        include_err=include_err,
        include_return_message_types=include_return_message_types,
    )
    return await service.messages(conversation_id, agent_id, query)
