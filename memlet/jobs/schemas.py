"""Wire schemas of ``/v1/jobs`` and ``/v1/messages/batches`` (Letta 0.16.8 names, field order and nulls)."""

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AnyUrl, BaseModel, ConfigDict, Field, UrlConstraints, field_serializer

from memlet.ids import Prefix, id_pattern
from memlet.messages.requests import LettaRequest
from memlet.messages.schemas import StopReasonType, StoredMessage

JobStatus = Literal["created", "running", "completed", "failed", "pending", "cancelled", "expired"]
JobType = Literal["job", "run", "batch"]
ACTIVE_JOB_STATUSES: tuple[JobStatus, ...] = ("created", "running")
TERMINAL_JOB_STATUSES: tuple[JobStatus, ...] = ("completed", "failed", "cancelled", "expired")


class Job(BaseModel):
    """A job as ``/v1/jobs`` shows it; validates straight from an ORM row."""

    model_config = ConfigDict(from_attributes=True, populate_by_name=True)

    created_by_id: str | None = None
    last_updated_by_id: str | None = None
    created_at: datetime
    updated_at: datetime | None = None
    status: JobStatus = "created"
    completed_at: datetime | None = None
    stop_reason: StopReasonType | None = None
    metadata: dict[str, Any] | None = Field(None, validation_alias="metadata_")
    job_type: JobType = "job"
    background: bool | None = None
    agent_id: str | None = None
    callback_url: str | None = None
    callback_sent_at: datetime | None = None
    callback_status_code: int | None = None
    callback_error: str | None = None
    ttft_ns: int | None = None
    total_duration_ns: int | None = None
    id: str

    @field_serializer("completed_at")
    def _naive_utc(self, value: datetime | None) -> str | None:
        # Letta stores completion times without a zone and shows them that way (as on runs).
        if value is None:
            return None
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value.isoformat()


class BatchJob(Job):
    """A batch job (``job_type`` is ``batch``)."""

    job_type: JobType = "batch"


AGENT_ID_LENGTH = len(Prefix.AGENT) + 37  # "agent-" and a uuid4


class LettaBatchRequest(LettaRequest):
    """One request of a batch: an ordinary send body plus the agent it goes to."""

    # Checked like a path id, as Letta's `AgentId` is: a malformed one is a 422 before anything is created.
    agent_id: Annotated[
        str, Field(pattern=id_pattern(Prefix.AGENT), min_length=AGENT_ID_LENGTH, max_length=AGENT_ID_LENGTH)
    ] = Field(..., description="The ID of the agent to send this batch request for")


class CreateBatch(BaseModel):
    requests: list[LettaBatchRequest] = Field(..., description="List of requests to be processed in batch.")
    callback_url: Annotated[AnyUrl, UrlConstraints(max_length=2083)] | None = Field(
        None,
        description="Optional URL to call via POST when the batch completes: {job_id, status, completed_at}.",
    )


class LettaBatchMessages(BaseModel):
    messages: list[StoredMessage]
