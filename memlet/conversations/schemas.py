"""Conversation request and response models (Letta 0.16.8 shapes, plus the fields newer SDKs send)."""

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from memlet.agents.parts import CompactionSettings
from memlet.messages.requests import LettaStreamingRequest
from memlet.providers.schemas import ModelSettings

ORDER_BY = ("created_at", "last_run_completion", "last_message_at")


class Conversation(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    created_by_id: str | None = None
    last_updated_by_id: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    id: str
    agent_id: str
    summary: str | None = None
    in_context_message_ids: list[str] = Field(default_factory=list)
    isolated_block_ids: list[str] = Field(default_factory=list)
    model: str | None = None
    # Stored as sent; shown whole, every default filled in, as Letta reads its stored dict back into the class.
    model_settings: ModelSettings | None = None
    last_message_at: datetime | None = None
    # Fields of newer SDKs (letta-client 1.12.1 and up).
    description: str | None = None
    archived: bool = False
    archived_at: datetime | None = None
    context_window_limit: int | None = None


class CreateConversation(BaseModel):
    """Unknown fields are ignored, as Letta does."""

    summary: str | None = None
    isolated_block_labels: list[str] | None = None
    model: str | None = None
    model_settings: ModelSettings | None = None
    description: str | None = None
    hidden: bool | None = None
    context_window_limit: int | None = Field(None, ge=1)


class UpdateConversation(BaseModel):
    summary: str | None = None
    model: str | None = None
    model_settings: ModelSettings | None = None
    last_message_at: datetime | None = None
    description: str | None = None
    archived: bool | None = None
    hidden: bool | None = None
    context_window_limit: int | None = Field(None, ge=1)


class ConversationMessageRequest(LettaStreamingRequest):
    """A send to a conversation: streams by default; `agent_id` names the agent of the `default` thread."""

    agent_id: str | None = None
    streaming: bool = True


class ConversationCompactionRequest(BaseModel):
    agent_id: str | None = None
    compaction_settings: CompactionSettings | None = None
