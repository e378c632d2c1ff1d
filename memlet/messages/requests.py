"""Request bodies of the send routes: ``LettaRequest`` and its streaming, conversation and async forms.

Letta is lenient with input and so are we: an item of ``messages`` without ``type`` is a message, or an approval
when it carries approval fields; ``input`` is shorthand for one user message; missing otids are generated.
The route-level checks are ``ensure_messages`` (Letta's 422 for no messages, and its 400 for an empty content) and
``ensure_streaming_options`` (its 422 for stream options on an agent send that does not stream).
"""

import uuid
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, Field, field_validator, model_validator

from memlet.errors import BadRequestError, UnprocessableError
from memlet.messages.content import MessageContentPart
from memlet.messages.schemas import DEPRECATED, ApprovalItem, ApprovalReturn, MessageType, ToolReturn


class _CreateBase(BaseModel):
    otid: str | None = None
    group_id: str | None = None

    @model_validator(mode="after")
    def _fill_otid(self) -> "_CreateBase":
        # Every input gets an otid so background retries can be matched to their first attempt.
        if self.otid is None:
            self.otid = str(uuid.uuid4())
        return self


class MessageCreate(_CreateBase):
    type: Literal["message"] = "message"
    role: Literal["user", "system", "assistant"]
    content: str | list[MessageContentPart]
    name: str | None = None
    sender_id: str | None = None
    batch_item_id: str | None = None


class ApprovalCreate(_CreateBase):
    """Approve/deny pending tool calls (or return client-side tool results) in ``approvals``."""

    type: Literal["approval"] = "approval"
    approvals: list[ApprovalItem] | None = None
    approve: bool | None = Field(None, json_schema_extra=DEPRECATED)
    approval_request_id: str | None = Field(None, json_schema_extra=DEPRECATED)
    reason: str | None = Field(None, json_schema_extra=DEPRECATED)

    @model_validator(mode="after")
    def _lift_deprecated_form(self) -> "ApprovalCreate":
        # The old single-call form names the tool call in approval_request_id; turn it into one ApprovalReturn.
        if not self.approvals and self.approve is not None and self.approval_request_id is not None:
            self.approvals = [
                ApprovalReturn(tool_call_id=self.approval_request_id, approve=self.approve, reason=self.reason)
            ]
        return self


class ToolReturnCreate(_CreateBase):
    type: Literal["tool_return"] = "tool_return"
    tool_returns: list[ToolReturn]


MessageCreateItem = Annotated[MessageCreate | ApprovalCreate | ToolReturnCreate, Field(discriminator="type")]


class ClientToolSchema(BaseModel):
    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None


class ClientSkillSchema(BaseModel):
    name: str
    description: str
    location: str


class LettaRequest(BaseModel):
    """Body of a send: exactly one of ``messages`` or ``input`` (a bare user message)."""

    messages: list[MessageCreateItem] | None = None
    input: str | list[MessageContentPart] | None = None
    max_steps: int = 50
    use_assistant_message: bool = Field(True, json_schema_extra=DEPRECATED)
    assistant_message_tool_name: str = Field("send_message", json_schema_extra=DEPRECATED)
    assistant_message_tool_kwarg: str = Field("message", json_schema_extra=DEPRECATED)
    include_return_message_types: list[MessageType] | None = None
    enable_thinking: str | bool = Field(True, json_schema_extra=DEPRECATED)
    client_tools: list[ClientToolSchema] | None = None
    client_skills: list[ClientSkillSchema] | None = None
    override_model: str | None = None
    include_compaction_messages: bool = False
    return_logprobs: bool = False
    top_logprobs: int | None = None
    return_token_ids: bool = False
    override_system: str | None = Field(None, validation_alias=AliasChoices("override_system", "system"))

    @field_validator("messages", mode="before")
    @classmethod
    def _infer_item_types(cls, value: Any) -> Any:
        # Clients often omit ``type``: approvals are recognised by their fields, everything else is a message.
        if not isinstance(value, list):
            return value
        items = []
        for item in value:
            if isinstance(item, dict) and item.get("type") is None:
                item = {**item, "type": _infer_type(item)}
            items.append(item)
        return items

    @model_validator(mode="after")
    def _exactly_one_input(self) -> "LettaRequest":
        if self.input is not None and self.messages is not None:
            raise ValueError("Cannot specify both 'input' and 'messages'. Use one or the other.")
        if self.input is None and self.messages is None:
            raise ValueError("Must specify either 'input' or 'messages'.")
        if self.input is not None:
            self.messages = [MessageCreate(role="user", content=self.input)]
        return self


def _infer_type(item: dict[str, Any]) -> str:
    if "approval_request_id" in item or "approve" in item or "approvals" in item:
        return "approval"
    if "tool_returns" in item:
        return "tool_return"
    return "message"


class LettaStreamingRequest(LettaRequest):
    streaming: bool = False
    stream_tokens: bool = False
    include_pings: bool = True
    background: bool = False


class ConversationMessageRequest(LettaRequest):
    agent_id: str | None = None
    streaming: bool = True
    stream_tokens: bool = False
    include_pings: bool = True
    background: bool = False


class LettaAsyncRequest(LettaRequest):
    callback_url: str | None = None


def ensure_messages(request: LettaRequest) -> None:
    """422 "Messages must not be empty" for ``messages: []`` (Letta checks this in the send route); 400 for a
    message whose content is ``""`` or ``[]``, with Letta's text, before anything is stored or sent to a model
    (Letta refused it when converting the input, after its run had started)."""
    if not request.messages:
        raise UnprocessableError("Messages must not be empty")
    if any(isinstance(m, MessageCreate) and m.content in ("", []) for m in request.messages):
        raise BadRequestError("Message content is empty or invalid")


def ensure_streaming_options(request: LettaStreamingRequest) -> None:
    """422 when stream-only options are set on a non-streaming agent send, with Letta's combined message (its
    conversation route checks nothing of the kind)."""
    if request.streaming:
        return
    problems = []
    if request.stream_tokens:
        problems.append("stream_tokens can only be true when streaming=true")
    if not request.include_pings:
        problems.append("include_pings can only be set to false when streaming=true")
    if request.background:
        problems.append("background can only be true when streaming=true")
    if problems:
        raise UnprocessableError(
            f"Streaming options set without streaming enabled. {'; '.join(problems)}. "
            "Either set streaming=true or use default values for streaming options."
        )
