"""Message search: ``POST /v1/agents/messages/search`` (raw messages with scores) and ``POST /v1/messages/search``
(public message views), both over the organization's messages, optionally narrowed to one agent or conversation.

Letta Cloud runs these on Turbopuffer (vector, full-text or hybrid); Letta OSS without it refuses them. Here the
text ranking is Postgres full-text search (`MessageRepository.search`: any query word as a word prefix on the
GIN index, best `ts_rank` first), followed by substring-only matches (Letta OSS's own text search) when those do
not fill the page. Results carry ``fts_rank`` (their 1-based position in that ranking) and
``rrf_score = 1 / (60 + rank)``, the reciprocal-rank-fusion score of a single ranking.
As in Letta's search index, only user, assistant and tool messages are searchable, and heartbeats, calls to
``conversation_search`` and the returns of ``send_message``/``conversation_search`` are never results.
``project_id`` and ``template_id`` are accepted but have nothing to filter here (no projects or templates)."""

import contextlib
import json
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.actor import Actor
from memlet.db import models as orm
from memlet.messages.content import AssistantContentPart, UserContentPart
from memlet.messages.letta_messages import AssistantMessage, ReasoningMessage, SystemMessage, UserMessage
from memlet.messages.repository import MessageRepository
from memlet.messages.schemas import MessageRole, StoredMessage
from memlet.messages.views import to_letta_messages

SEARCHABLE_ROLES = ("user", "assistant", "tool")
_UNSEARCHABLE_RETURNS = frozenset({"send_message", "conversation_search"})
_RRF_K = 60
# Rows the text match finds but the index would not hold are dropped after the query; fetch a margin.
_OVERFETCH = 2

SearchMode = Literal["vector", "fts", "hybrid"]


def _json_object(text: str) -> dict[str, Any] | None:
    if not text.strip().startswith("{"):
        return None
    with contextlib.suppress(ValueError):
        value = json.loads(text)
        if isinstance(value, dict):
            return value
    return None


def search_result_fields(row: orm.Message) -> dict[str, Any]:
    """What a search hit shows of its message, shaped as Letta shapes it.

    Text that is itself a JSON object (system alerts, summaries) is merged in rather than nested; heartbeats show
    nothing; a V2 `send_message` call shows its message as `content` and the inner thoughts as `thinking`.
    """
    text = " ".join(
        str(p.get("text") or p.get("reasoning") or "") for p in row.content or [] if p.get("text") or p.get("reasoning")
    )
    packed = _json_object(text)
    if packed is not None and packed.get("type") == "heartbeat":
        return {}
    for call in row.tool_calls or []:
        function = call.get("function") or {}
        if function.get("name") == "send_message":
            with contextlib.suppress(ValueError, AttributeError):
                message = json.loads(function.get("arguments") or "{}").get("message", "")
                return {"thinking": text, "content": message}
    if not text:
        return {}
    return packed if packed is not None else {"content": text}


class MessageSearchRequest(BaseModel):
    """Body of ``POST /v1/agents/messages/search``."""

    query: str | None = Field(None, description="Text query for full-text search")
    search_mode: SearchMode = Field("hybrid", description="Search mode to use")
    roles: list[MessageRole] | None = Field(None, description="Filter messages by role")
    agent_id: str | None = Field(None, description="Filter messages by agent ID")
    project_id: str | None = Field(None, description="Filter messages by project ID")
    template_id: str | None = Field(None, description="Filter messages by template ID")
    conversation_id: str | None = Field(None, description="Filter messages by conversation ID")
    limit: int = Field(50, ge=1, le=100, description="Maximum number of results to return")
    start_date: datetime | None = Field(None, description="Filter messages created after this date")
    end_date: datetime | None = Field(None, description="Filter messages created on or before this date")


class SearchAllMessagesRequest(BaseModel):
    """Body of ``POST /v1/messages/search``."""

    query: str = Field(..., description="Text query for full-text search")
    search_mode: SearchMode = Field("hybrid", description="Search mode to use")
    agent_id: str | None = Field(None, description="Filter messages by agent ID")
    conversation_id: str | None = Field(None, description="Filter messages by conversation ID")
    limit: int = Field(50, ge=1, le=100, description="Maximum number of results to return")
    start_date: datetime | None = Field(None, description="Filter messages created after this date")
    end_date: datetime | None = Field(None, description="Filter messages created on or before this date")


class MessageSearchResult(BaseModel):
    """A stored message found by search, with the text that was matched and its rank."""

    embedded_text: str = Field(..., description="The embedded content (LLM-friendly)")
    message: StoredMessage = Field(..., description="The raw message object")
    fts_rank: int | None = Field(None, description="Full-text search rank position if FTS was used")
    vector_rank: int | None = Field(None, description="Vector search rank position if vector search was used")
    rrf_score: float = Field(..., description="Reciprocal Rank Fusion combined score")


class _ListResultBase(BaseModel):
    message_id: str = Field(..., description="The unique identifier of the message.")
    agent_id: str | None = Field(None, description="The unique identifier of the agent that owns the message.")
    conversation_id: str | None = Field(
        None, description="The unique identifier of the conversation that the message belongs to."
    )
    created_at: datetime = Field(..., description="The time the message was created in ISO format.")


class SystemMessageListResult(_ListResultBase):
    message_type: Literal["system_message"] = "system_message"
    content: str


class UserMessageListResult(_ListResultBase):
    message_type: Literal["user_message"] = "user_message"
    content: list[UserContentPart] | str


class ReasoningMessageListResult(_ListResultBase):
    message_type: Literal["reasoning_message"] = "reasoning_message"
    reasoning: str


class AssistantMessageListResult(_ListResultBase):
    message_type: Literal["assistant_message"] = "assistant_message"
    content: list[AssistantContentPart] | str


MessageListResult = Annotated[
    SystemMessageListResult | UserMessageListResult | ReasoningMessageListResult | AssistantMessageListResult,
    Field(discriminator="message_type"),
]


def _searchable(row: orm.Message) -> dict[str, Any] | None:
    """What the search index would hold for a row (as a dict to encode), or None if it holds nothing."""
    if row.role == "tool" and row.name in _UNSEARCHABLE_RETURNS:
        return None
    fields = search_result_fields(row)
    return fields or None


def _list_results(row: orm.Message) -> list[MessageListResult]:
    """The row's public views that Letta's search shows (system, user, reasoning and assistant messages)."""
    ids = {
        "message_id": row.id,
        "agent_id": row.agent_id,
        "conversation_id": row.conversation_id,
        "created_at": row.created_at,
    }
    results: list[MessageListResult] = []
    for view in to_letta_messages([StoredMessage.model_validate(row)], text_is_assistant=True):
        if isinstance(view, SystemMessage):
            results.append(SystemMessageListResult(content=view.content, **ids))
        elif isinstance(view, UserMessage):
            results.append(UserMessageListResult(content=view.content, **ids))
        elif isinstance(view, ReasoningMessage):
            results.append(ReasoningMessageListResult(reasoning=view.reasoning, **ids))
        elif isinstance(view, AssistantMessage):
            results.append(AssistantMessageListResult(content=view.content, **ids))
    return results


class MessageSearchService:
    """Organization-scoped message search for one actor."""

    def __init__(self, session: AsyncSession, actor: Actor) -> None:
        self.repo = MessageRepository(session)
        self.actor = actor

    async def _hits(
        self,
        *,
        query: str | None,
        roles: list[str],
        agent_id: str | None,
        conversation_id: str | None,
        start: datetime | None,
        end: datetime | None,
        limit: int,
    ) -> list[tuple[orm.Message, dict[str, Any]]]:
        searchable = [r for r in roles if r in SEARCHABLE_ROLES]
        if not searchable:
            return []
        rows = await self.repo.search(
            agent_id,
            organization_id=self.actor.organization_id,
            conversation_id=conversation_id,
            query=query,
            roles=searchable,
            start=start,
            end=end,
            limit=limit * _OVERFETCH,
        )
        hits = [(row, fields) for row in rows if (fields := _searchable(row)) is not None]
        return hits[:limit]

    async def search(self, req: MessageSearchRequest) -> list[MessageSearchResult]:
        """Stored messages matching the query, newest first, with their matched text and rank."""
        hits = await self._hits(
            query=req.query,
            roles=[str(r) for r in req.roles] if req.roles else list(SEARCHABLE_ROLES),
            agent_id=req.agent_id,
            conversation_id=req.conversation_id,
            start=req.start_date,
            end=req.end_date,
            limit=req.limit,
        )
        ranked = bool(req.query)
        return [
            MessageSearchResult(
                embedded_text=json.dumps(fields, ensure_ascii=False),
                message=StoredMessage.model_validate(row),
                fts_rank=rank if ranked else None,
                rrf_score=1 / (_RRF_K + rank),
            )
            for rank, (row, fields) in enumerate(hits, start=1)
        ]

    async def search_all(self, req: SearchAllMessagesRequest) -> list[MessageListResult]:
        """Public views of the messages matching the query, newest message first."""
        hits = await self._hits(
            query=req.query,
            roles=list(SEARCHABLE_ROLES),
            agent_id=req.agent_id,
            conversation_id=req.conversation_id,
            start=req.start_date,
            end=req.end_date,
            limit=req.limit,
        )
        return [result for row, _ in hits for result in _list_results(row)]
