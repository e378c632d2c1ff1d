"""Wire schemas of the runs and steps APIs (Letta 0.16.8 names, field order and nulls).

``Run`` and ``Step`` validate straight from ORM rows; the few fields memlet derives (``request_config`` defaults,
token-detail objects) are filled by the ``from_row`` constructors.
"""

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from memlet.db import models as orm
from memlet.messages.schemas import LettaErrorMessage, MessageType, StopReasonType, StoredMessage

RunStatus = Literal["created", "running", "completed", "failed", "cancelled"]
StepStatus = Literal["pending", "success", "failed", "cancelled"]
FeedbackType = Literal["positive", "negative"]
ACTIVE_STATUSES: tuple[RunStatus, ...] = ("created", "running")


class LettaRequestConfig(BaseModel):
    """How the run's messages are shown: the send request's display options, stored with the run."""

    use_assistant_message: bool = True
    assistant_message_tool_name: str = "send_message"
    assistant_message_tool_kwarg: str = "message"
    include_return_message_types: list[MessageType] | None = None


class Run(BaseModel):
    model_config = ConfigDict(from_attributes=True, populate_by_name=True)

    id: str
    status: RunStatus = "created"
    created_at: datetime
    completed_at: datetime | None = None
    agent_id: str
    conversation_id: str | None = None
    base_template_id: str | None = None
    background: bool | None = None
    metadata: dict[str, Any] | None = Field(None, validation_alias="metadata_")
    request_config: LettaRequestConfig | None = None
    stop_reason: StopReasonType | None = None
    callback_url: str | None = None
    callback_sent_at: datetime | None = None
    callback_status_code: int | None = None
    callback_error: str | None = None
    ttft_ns: int | None = None
    total_duration_ns: int | None = None

    @field_serializer("metadata")
    def _error_in_field_order(self, value: dict[str, Any] | None) -> dict[str, Any] | None:
        # Postgres JSONB reorders an object's keys; a streamed run's error is shown in its message's field order,
        # as Letta stored it (Letta Code prints this object as it comes when a turn fails).
        error = value.get("error") if value else None
        if value is None or not isinstance(error, dict) or error.get("message_type") != "error_message":
            return value
        fields = [name for name in LettaErrorMessage.model_fields if name in error]
        return {**value, "error": {**{name: error[name] for name in fields}, **error}}

    @field_serializer("completed_at")
    def _naive_utc(self, value: datetime | None) -> str | None:
        # Letta stores completion times without a zone and shows them that way: 2026-11-22T03:03:34.925801.
        if value is None:
            return None
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value.isoformat()


class UsageStatisticsPromptTokenDetails(BaseModel):
    cached_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_creation_tokens: int | None = None


class UsageStatisticsCompletionTokenDetails(BaseModel):
    reasoning_tokens: int | None = None


class UsageStatistics(BaseModel):
    """Body of ``GET /v1/runs/{run_id}/usage``: token totals over the run's steps."""

    completion_tokens: int = 0
    prompt_tokens: int = 0
    total_tokens: int = 0
    prompt_tokens_details: UsageStatisticsPromptTokenDetails | None = None
    completion_tokens_details: UsageStatisticsCompletionTokenDetails | None = None


class RunMetrics(BaseModel):
    id: str
    agent_id: str | None = None
    project_id: str | None = None
    run_start_ns: int | None = None
    run_ns: int | None = None
    num_steps: int | None = None
    tools_used: list[str] | None = None
    template_id: str | None = None
    base_template_id: str | None = None


class Step(BaseModel):
    """One LLM call of a run, with its usage (``messages`` is deprecated and always empty, as in Letta)."""

    id: str
    origin: str | None = None
    organization_id: str | None = None
    provider_id: str | None = None
    run_id: str | None = None
    agent_id: str | None = None
    provider_name: str | None = None
    provider_category: str | None = None
    model: str | None = None
    model_handle: str | None = None
    model_endpoint: str | None = None
    context_window_limit: int | None = None
    completion_tokens: int | None = None
    prompt_tokens: int | None = None
    total_tokens: int | None = None
    cached_input_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    completion_tokens_details: dict[str, Any] | None = None
    prompt_tokens_details: dict[str, Any] | None = None
    stop_reason: StopReasonType | None = None
    tags: list[str] = Field(default_factory=list)
    tid: str | None = None
    trace_id: str | None = None
    request_id: str | None = None
    messages: list[StoredMessage] = Field(default_factory=list, json_schema_extra={"deprecated": True})
    feedback: FeedbackType | None = None
    project_id: str | None = None
    error_type: str | None = None
    error_data: dict[str, Any] | None = None
    status: StepStatus | None = "pending"

    @classmethod
    def from_row(cls, row: orm.Step) -> "Step":
        """The public step; token details are rebuilt from the counters the loop stores."""
        return cls(
            id=row.id,
            organization_id=row.organization_id,
            provider_id=row.provider_id,
            run_id=row.run_id,
            agent_id=row.agent_id,
            provider_name=row.provider_name,
            provider_category=row.provider_category,
            model=row.model,
            model_handle=row.model_handle,
            model_endpoint=row.model_endpoint,
            context_window_limit=row.context_window_limit,
            completion_tokens=row.completion_tokens,
            prompt_tokens=row.prompt_tokens,
            total_tokens=row.total_tokens,
            cached_input_tokens=row.cached_input_tokens,
            cache_write_tokens=row.cache_write_tokens,
            reasoning_tokens=row.reasoning_tokens,
            completion_tokens_details={"reasoning_tokens": row.reasoning_tokens or 0},
            prompt_tokens_details={
                "cached_tokens": row.cached_input_tokens or 0,
                "cache_read_tokens": row.cached_input_tokens or 0,
                "cache_creation_tokens": row.cache_write_tokens or 0,
            },
            stop_reason=row.stop_reason,  # type: ignore[arg-type]
            tags=list(row.tags or []),
            trace_id=row.trace_id,
            feedback=row.feedback,  # type: ignore[arg-type]
            project_id=row.project_id,
            error_type=row.error_type,
            error_data=row.error_data,
            status=row.status,  # type: ignore[arg-type]
        )


class StepMetrics(BaseModel):
    id: str
    provider_id: str | None = None
    run_id: str | None = None
    agent_id: str | None = None
    step_start_ns: int | None = None
    llm_request_start_ns: int | None = None
    llm_request_ns: int | None = None
    tool_execution_ns: int | None = None
    step_ns: int | None = None
    base_template_id: str | None = None
    template_id: str | None = None
    project_id: str | None = None


class ModifyFeedbackRequest(BaseModel):
    feedback: FeedbackType | None = None
    tags: list[str] | None = None


class RetrieveStreamRequest(BaseModel):
    """The body of ``POST /v1/runs/{run_id}/stream`` and ``POST /v1/conversations/{id}/stream`` (resume)."""

    agent_id: str | None = None
    run_id: str | None = None
    otid: str | None = None
    starting_after: int = Field(default=0, ge=0, le=2**31 - 1)  # run_chunks.seq_id is a 32-bit integer
    include_pings: bool | None = True
    poll_interval: float | None = Field(default=0.1, ge=0.01, le=10)
    batch_size: int | None = Field(default=100, ge=1, le=10000)


class ProviderTrace(BaseModel):
    """A step's raw provider request and response, as the LLM call was made (Letta's schema; `user_id` is in
    Letta's model though its published OpenAPI leaves it out)."""

    created_by_id: str | None = None
    last_updated_by_id: str | None = None
    created_at: datetime
    updated_at: datetime | None = None
    id: str
    request_json: dict[str, Any]
    response_json: dict[str, Any]
    step_id: str | None = None
    agent_id: str | None = None
    agent_tags: list[str] | None = None
    call_type: str | None = None
    run_id: str | None = None
    source: str | None = None
    org_id: str | None = None
    user_id: str | None = None
    compaction_settings: dict[str, Any] | None = None
    llm_config: dict[str, Any] | None = None
    billing_context: dict[str, Any] | None = None
