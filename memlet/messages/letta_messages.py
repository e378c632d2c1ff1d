"""The public ``LettaMessage`` union (discriminator ``message_type``) and the tool-call/return shapes it shows.

Each member is one public view of (part of) a stored message, with Letta 0.16.8's names, defaults, field order and
nulls. ``memlet.messages.schemas`` re-exports every name here.
"""

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, field_serializer, model_serializer

from memlet.messages.content import AssistantContentPart, ToolReturnContentPart, UserContentPart

# Deprecated-but-served fields are flagged in the OpenAPI document only: pydantic's own ``deprecated=`` would
# warn every time our code reads them.
DEPRECATED: dict[str, Any] = {"deprecated": True}


# --- tool calls and returns as the public API shows them ---------------------------------------------------


class ToolCall(BaseModel):
    name: str
    arguments: str
    tool_call_id: str


class ToolCallDelta(BaseModel):
    """A token-streaming fragment of a tool call; null keys are left out, as in OpenAI's chunks."""

    name: str | None = None
    arguments: str | None = None
    tool_call_id: str | None = None

    @model_serializer(mode="wrap")
    def _drop_nulls(self, handler: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
        return {key: value for key, value in handler(self).items() if value is not None}


class ApprovalReturn(BaseModel):
    type: Literal["approval"] = "approval"
    tool_call_id: str
    approve: bool
    reason: str | None = None


class ToolReturn(BaseModel):
    """A tool result as the client sends it (client-side tools) and as ``tool_returns`` items show it."""

    type: Literal["tool"] = "tool"
    tool_return: str | list[ToolReturnContentPart]
    status: Literal["success", "error"]
    tool_call_id: str
    stdout: list[str] | None = None
    stderr: list[str] | None = None


ApprovalItem = Annotated[ApprovalReturn | ToolReturn, Field(discriminator="type")]


# --- the LettaMessage union --------------------------------------------------------------------------------


class LettaMessageBase(BaseModel):
    """Fields common to every public message. ``id`` is the stored row's id, shared by all its views."""

    id: str
    date: datetime
    name: str | None = None
    message_type: str
    otid: str | None = None
    sender_id: str | None = None
    step_id: str | None = None
    is_err: bool | None = None
    seq_id: int | None = None
    run_id: str | None = None

    @field_serializer("date")
    def _date_seconds(self, value: datetime) -> str:
        # Letta drops sub-second precision and always shows an offset: 2026-11-22T03:03:34+00:00.
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.isoformat(timespec="seconds")

    @field_serializer("is_err")
    def _is_err_only_when_true(self, value: bool | None) -> bool | None:
        # A debugging flag: false is shown as null so normal messages look the same as before it existed.
        return True if value is True else None


class SystemMessage(LettaMessageBase):
    message_type: Literal["system_message"] = "system_message"
    content: str


class UserMessage(LettaMessageBase):
    message_type: Literal["user_message"] = "user_message"
    content: str | list[UserContentPart]


class ReasoningMessage(LettaMessageBase):
    message_type: Literal["reasoning_message"] = "reasoning_message"
    source: Literal["reasoner_model", "non_reasoner_model"] = "non_reasoner_model"
    reasoning: str
    signature: str | None = None


class HiddenReasoningMessage(LettaMessageBase):
    message_type: Literal["hidden_reasoning_message"] = "hidden_reasoning_message"
    state: Literal["redacted", "omitted"]
    hidden_reasoning: str | None = None


class ToolCallMessage(LettaMessageBase):
    message_type: Literal["tool_call_message"] = "tool_call_message"
    tool_call: ToolCall | ToolCallDelta = Field(json_schema_extra=DEPRECATED)
    tool_calls: list[ToolCall] | ToolCallDelta | None = None


class ToolReturnMessage(LettaMessageBase):
    message_type: Literal["tool_return_message"] = "tool_return_message"
    tool_return: str = Field(json_schema_extra=DEPRECATED)
    status: Literal["success", "error"] = Field(json_schema_extra=DEPRECATED)
    tool_call_id: str = Field(json_schema_extra=DEPRECATED)
    stdout: list[str] | None = Field(None, json_schema_extra=DEPRECATED)
    stderr: list[str] | None = Field(None, json_schema_extra=DEPRECATED)
    tool_returns: list[ToolReturn] | None = None


class AssistantMessage(LettaMessageBase):
    message_type: Literal["assistant_message"] = "assistant_message"
    content: str | list[AssistantContentPart]


class ApprovalRequestMessage(LettaMessageBase):
    message_type: Literal["approval_request_message"] = "approval_request_message"
    tool_call: ToolCall | ToolCallDelta = Field(json_schema_extra=DEPRECATED)
    tool_calls: list[ToolCall] | ToolCallDelta | None = None


class ApprovalResponseMessage(LettaMessageBase):
    message_type: Literal["approval_response_message"] = "approval_response_message"
    approvals: list[ApprovalItem] | None = None
    approve: bool | None = Field(None, json_schema_extra=DEPRECATED)
    approval_request_id: str | None = Field(None, json_schema_extra=DEPRECATED)
    reason: str | None = Field(None, json_schema_extra=DEPRECATED)


class CompactionStats(BaseModel):
    trigger: str
    context_tokens_before: int | None = None
    context_tokens_after: int | None = None
    context_window: int
    messages_count_before: int
    messages_count_after: int


class SummaryMessage(LettaMessageBase):
    message_type: Literal["summary_message"] = "summary_message"
    summary: str
    compaction_stats: CompactionStats | None = None


class EventMessage(LettaMessageBase):
    message_type: Literal["event_message"] = "event_message"
    event_type: Literal["compaction"]
    event_data: dict[str, Any]


LettaMessage = Annotated[
    SystemMessage
    | UserMessage
    | ReasoningMessage
    | HiddenReasoningMessage
    | ToolCallMessage
    | ToolReturnMessage
    | AssistantMessage
    | ApprovalRequestMessage
    | ApprovalResponseMessage
    | SummaryMessage
    | EventMessage,
    Field(discriminator="message_type"),
]
"""Letta's ``LettaMessageUnion``: one public view of (part of) a stored message."""
