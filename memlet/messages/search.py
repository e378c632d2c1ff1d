"""Message search: ``POST /v1/agents/messages/search`` (raw messages with scores) and ``POST /v1/messages/search``
(public message views), both over the organization's messages, optionally narrowed to one agent or conversation.

Letta Cloud runs these on Turbopuffer (vector, full-text or hybrid); Letta OSS without it refuses them. Here they
run on Postgres (`memlet.messages.hybrid`): full-text search on a GIN index (then substring-only matches) fused by
reciprocal rank fusion with pgvector nearest neighbours where messages have vectors, filling ``fts_rank``,
``vector_rank`` and ``rrf_score`` from the rankings actually used.
As in Letta's search index, only user, assistant and tool messages are searchable, and heartbeats, calls to
``conversation_search`` and the returns of ``send_message``/``conversation_search`` are never results.
``project_id`` and ``template_id`` are accepted but have nothing to filter here (no projects or templates)."""

import json
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.actor import Actor
from memlet.db import models as orm
from memlet.db.loaded import model_input
from memlet.messages.content import AssistantContentPart, UserContentPart
from memlet.messages.embedding_repository import SEARCHABLE_ROLES, MessageScope
from memlet.messages.hybrid import Hit, QueryEmbedder, SearchMode, hybrid_search
from memlet.messages.letta_messages import AssistantMessage, ReasoningMessage, SystemMessage, UserMessage
from memlet.messages.schemas import MessageRole, StoredMessage
from memlet.messages.views import to_letta_messages


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


def _list_results(row: orm.Message) -> list[MessageListResult]:
    """The row's public views that Letta's search shows (system, user, reasoning and assistant messages)."""
    ids = {
        "message_id": row.id,
        "agent_id": row.agent_id,
        "conversation_id": row.conversation_id,
        "created_at": row.created_at,
    }
    results: list[MessageListResult] = []
    for view in to_letta_messages([StoredMessage.model_validate(model_input(row))], text_is_assistant=True):
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
    """Organization-scoped message search for one actor; `embedder` embeds queries where message vectors exist."""

    def __init__(self, session: AsyncSession, actor: Actor, embedder: QueryEmbedder | None = None) -> None:
        self.session = session
        self.actor = actor
        self.embedder = embedder

    async def _hits(self, query: str | None, mode: SearchMode, scope: MessageScope, limit: int) -> list[Hit]:
        if not [r for r in scope.roles if r in SEARCHABLE_ROLES]:
            return []
        return await hybrid_search(
            self.session, self.embedder, query=query, mode=mode, scope=scope, limit=limit, org_id=scope.organization_id
        )

    def _scope(self, req: MessageSearchRequest | SearchAllMessagesRequest, roles: list[str]) -> MessageScope:
        return MessageScope(
            roles=[r for r in roles if r in SEARCHABLE_ROLES],
            agent_id=req.agent_id,
            organization_id=self.actor.organization_id,
            conversation_id=req.conversation_id,
            start=req.start_date,
            end=req.end_date,
        )

    async def search(self, req: MessageSearchRequest) -> list[MessageSearchResult]:
        """Stored messages matching the query, best first, with their matched text and ranks."""
        roles = [str(r) for r in req.roles] if req.roles else list(SEARCHABLE_ROLES)
        hits = await self._hits(req.query, req.search_mode, self._scope(req, roles), req.limit)
        return [
            MessageSearchResult(
                embedded_text=json.dumps(hit.fields, ensure_ascii=False),
                message=StoredMessage.model_validate(model_input(hit.row)),
                fts_rank=hit.fts_rank,
                vector_rank=hit.vector_rank,
                rrf_score=hit.rrf_score,
            )
            for hit in hits
        ]

    async def search_all(self, req: SearchAllMessagesRequest) -> list[MessageListResult]:
        """Public views of the messages matching the query, best message first."""
        hits = await self._hits(req.query, req.search_mode, self._scope(req, list(SEARCHABLE_ROLES)), req.limit)
        return [result for hit in hits for result in _list_results(hit.row)]
