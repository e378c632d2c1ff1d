"""Wire schemas of the messages API, with Letta 0.16.8's names, defaults, field order and nulls.

- ``LettaMessage``: the public message union (discriminator ``message_type``), defined in ``letta_messages.py``
  and re-exported here, plus the stream-only items ``LettaPing``, ``LettaErrorMessage``, ``LettaStopReason``
  and ``LettaUsageStatistics``.
- ``StoredMessage``: Letta's internal ``Message`` (one DB row; also what ``GET /v1/agents/{id}/context`` lists).
- ``LettaMessageUpdate``: the PATCH body for one message (request bodies of sends are in ``requests.py``).
- ``LettaResponse``: the blocking send result.
"""

import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from memlet.ids import Prefix, new_id
from memlet.messages.content import (
    AssistantContentPart,
    MessageContentPart,
    ToolReturnContentPart,
    UserContentPart,
)
from memlet.messages.letta_messages import (
    DEPRECATED,
    ApprovalItem,
    ApprovalRequestMessage,
    ApprovalResponseMessage,
    ApprovalReturn,
    AssistantMessage,
    CompactionStats,
    EventMessage,
    HiddenReasoningMessage,
    LettaMessage,
    LettaMessageBase,
    ReasoningMessage,
    SummaryMessage,
    SystemMessage,
    ToolCall,
    ToolCallDelta,
    ToolCallMessage,
    ToolReturn,
    ToolReturnMessage,
    UserMessage,
)

__all__ = [
    "DEPRECATED",
    "EDITING_REMOVED",
    "ApprovalItem",
    "ApprovalRequestMessage",
    "ApprovalResponseMessage",
    "ApprovalReturn",
    "AssistantMessage",
    "CompactionStats",
    "EventMessage",
    "HiddenReasoningMessage",
    "LettaErrorMessage",
    "LettaMessage",
    "LettaMessageBase",
    "LettaMessageUpdate",
    "LettaPing",
    "LettaResponse",
    "LettaStopReason",
    "LettaUsageStatistics",
    "MessageRole",
    "MessageType",
    "OpenAIToolCall",
    "ReasoningMessage",
    "StopReasonType",
    "StoredApprovalItem",
    "StoredMessage",
    "StoredToolReturn",
    "SummaryMessage",
    "SystemMessage",
    "ToolCall",
    "ToolCallDelta",
    "ToolCallFunction",
    "ToolCallMessage",
    "ToolReturn",
    "ToolReturnMessage",
    "TurnTokenData",
    "UpdateAssistantMessage",
    "UpdateReasoningMessage",
    "UpdateSystemMessage",
    "UpdateUserMessage",
    "UserMessage",
    "run_status_for",
]


class MessageType(StrEnum):
    system_message = "system_message"
    user_message = "user_message"
    assistant_message = "assistant_message"
    reasoning_message = "reasoning_message"
    hidden_reasoning_message = "hidden_reasoning_message"
    tool_call_message = "tool_call_message"
    tool_return_message = "tool_return_message"
    approval_request_message = "approval_request_message"
    approval_response_message = "approval_response_message"
    summary_message = "summary_message"
    event_message = "event_message"


class MessageRole(StrEnum):
    assistant = "assistant"
    user = "user"
    tool = "tool"
    function = "function"
    system = "system"
    approval = "approval"
    summary = "summary"


# --- stream-only items and the blocking response -----------------------------------------------------------


class LettaPing(LettaMessageBase):
    """A keep-alive event; the first one of a stream carries the run id."""

    message_type: Literal["ping"] = "ping"

    @classmethod
    def create(cls, run_id: str | None, *, seq_id: int | None = None) -> "LettaPing":
        """A fresh ping (``id`` is ``ping-<uuid4>``, dated now)."""
        return cls(id=f"ping-{uuid.uuid4()}", date=datetime.now(UTC), run_id=run_id, seq_id=seq_id)


class LettaErrorMessage(BaseModel):
    message_type: Literal["error_message"] = "error_message"
    run_id: str
    error_type: str
    message: str
    detail: str | None = None
    seq_id: int | None = None


class StopReasonType(StrEnum):
    end_turn = "end_turn"
    error = "error"
    llm_api_error = "llm_api_error"
    invalid_llm_response = "invalid_llm_response"
    invalid_tool_call = "invalid_tool_call"
    max_steps = "max_steps"
    max_tokens_exceeded = "max_tokens_exceeded"
    no_tool_call = "no_tool_call"
    tool_rule = "tool_rule"
    cancelled = "cancelled"
    insufficient_credits = "insufficient_credits"
    requires_approval = "requires_approval"
    context_window_overflow_in_system_prompt = "context_window_overflow_in_system_prompt"


_COMPLETED = {
    StopReasonType.end_turn,
    StopReasonType.max_steps,
    StopReasonType.tool_rule,
    StopReasonType.requires_approval,
}


def run_status_for(stop_reason: StopReasonType) -> Literal["completed", "failed", "cancelled"]:
    """The run status a stop reason implies: completed, cancelled, or failed for every error-like reason."""
    if stop_reason in _COMPLETED:
        return "completed"
    if stop_reason is StopReasonType.cancelled:
        return "cancelled"
    return "failed"


class LettaStopReason(BaseModel):
    message_type: Literal["stop_reason"] = "stop_reason"
    stop_reason: StopReasonType


class LettaUsageStatistics(BaseModel):
    """Token usage summed over a request's steps; the optional counters stay null when no provider reported them."""

    message_type: Literal["usage_statistics"] = "usage_statistics"
    completion_tokens: int = 0
    prompt_tokens: int = 0
    total_tokens: int = 0
    step_count: int = 0
    run_ids: list[str] | None = None
    cached_input_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    context_tokens: int | None = None


class TurnTokenData(BaseModel):
    role: Literal["assistant", "tool"]
    output_ids: list[int] | None = None
    output_token_logprobs: list[list[Any]] | None = None
    content: str | None = None
    tool_name: str | None = None


class TopLogprob(BaseModel):
    token: str
    bytes: list[int] | None = None
    logprob: float


class ChatCompletionTokenLogprob(BaseModel):
    token: str
    bytes: list[int] | None = None
    logprob: float
    top_logprobs: list[TopLogprob]


class ChoiceLogprobs(BaseModel):
    """OpenAI's per-token log probabilities of one answer (`memlet.llm.logprobs`)."""

    content: list[ChatCompletionTokenLogprob] | None = None
    refusal: list[ChatCompletionTokenLogprob] | None = None

    @classmethod
    def of(cls, value: dict[str, Any] | None) -> "ChoiceLogprobs | None":
        return None if value is None else cls.model_validate(value)


class LettaResponse(BaseModel):
    messages: list[LettaMessage]
    stop_reason: LettaStopReason
    usage: LettaUsageStatistics
    # The last LLM call's, when the turn asked for them (`return_logprobs`).
    logprobs: ChoiceLogprobs | None = None
    turns: list[TurnTokenData] | None = None


# --- the stored message (Letta's internal ``Message``) -----------------------------------------------------


class ToolCallFunction(BaseModel):
    arguments: str
    name: str


class OpenAIToolCall(BaseModel):
    """A tool call in OpenAI chat-completions form, as stored on assistant/approval rows."""

    id: str
    function: ToolCallFunction
    type: Literal["function"] = "function"


class StoredToolReturn(BaseModel):
    """A tool result as stored: ``func_response`` is the packed ``{"status","message","time"}`` JSON or parts."""

    tool_call_id: Any | None = None
    status: Literal["success", "error"]
    stdout: list[str] | None = None
    stderr: list[str] | None = None
    func_response: str | list[ToolReturnContentPart] | None = None


def _stored_approval_kind(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return "approval" if kind == "approval" else "tool"


StoredApprovalItem = Annotated[
    Annotated[ApprovalReturn, Tag("approval")] | Annotated[StoredToolReturn, Tag("tool")],
    Discriminator(_stored_approval_kind),
]


class StoredMessage(BaseModel):
    """One stored message row, field for field Letta's ``Message`` schema (validates from ORM rows too)."""

    model_config = ConfigDict(from_attributes=True)

    created_by_id: str | None = None
    last_updated_by_id: str | None = None
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    updated_at: datetime | None = None
    id: str = Field(default_factory=lambda: new_id(Prefix.MESSAGE))
    agent_id: str | None = None
    model: str | None = None
    role: MessageRole
    content: list[MessageContentPart] | None = None
    name: str | None = None
    tool_calls: list[OpenAIToolCall] | None = None
    tool_call_id: str | None = None
    step_id: str | None = None
    run_id: str | None = None
    otid: str | None = None
    tool_returns: list[StoredToolReturn] | None = None
    group_id: str | None = None
    sender_id: str | None = None
    batch_item_id: str | None = None
    conversation_id: str | None = None
    is_err: bool | None = None
    approval_request_id: str | None = None
    approve: bool | None = None
    denial_reason: str | None = None
    approvals: list[StoredApprovalItem] | None = None


# --- PATCH /v1/agents/{agent_id}/messages/{message_id} -----------------------------------------------------


class UpdateSystemMessage(BaseModel):
    message_type: Literal["system_message"] = "system_message"
    content: str


class UpdateUserMessage(BaseModel):
    message_type: Literal["user_message"] = "user_message"
    content: str | list[UserContentPart]


class UpdateReasoningMessage(BaseModel):
    reasoning: str
    message_type: Literal["reasoning_message"] = "reasoning_message"


class UpdateAssistantMessage(BaseModel):
    message_type: Literal["assistant_message"] = "assistant_message"
    content: str | list[AssistantContentPart]


# Letta 0.16 removed message editing; every message PATCH route (an agent's, a group's) answers 405 with this.
EDITING_REMOVED = (
    "Message editing is no longer supported. Messages are immutable as they may be shared across multiple "
    "conversations via forking."
)

LettaMessageUpdate = Annotated[
    UpdateSystemMessage | UpdateUserMessage | UpdateReasoningMessage | UpdateAssistantMessage,
    Field(discriminator="message_type"),
]
