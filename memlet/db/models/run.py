from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, DateTime, ForeignKey, Index, Integer, String, Text, text
from sqlalchemy.dialects.postgresql import JSON, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from memlet.db.base import Base, OrgScopedMixin, TimestampMixin


class Run(TimestampMixin, OrgScopedMixin, Base):
    """One request processed by the agent loop: created -> running -> completed / failed / cancelled."""

    __tablename__ = "runs"
    __table_args__ = (
        Index("ix_runs_agent_created", "agent_id", "created_at"),
        Index("ix_runs_conversation_id", "conversation_id"),
        # One turn at a time per conversation: a second active run of one conversation cannot be inserted.
        Index(
            "ux_runs_active_conversation",
            "conversation_id",
            unique=True,
            postgresql_where=text("conversation_id IS NOT NULL AND status IN ('created', 'running')"),
        ),
        Index("ix_runs_active_lease", "lease_expires_at", postgresql_where=text("status IN ('created', 'running')")),
        Index(
            "ux_runs_active_request",
            "agent_id",
            "request_token",
            unique=True,
            postgresql_where=text("request_token IS NOT NULL AND status IN ('created', 'running')"),
        ),
    )

    id: Mapped[str] = mapped_column(String, primary_key=True)
    agent_id: Mapped[str | None] = mapped_column(String, ForeignKey("agents.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String, default="created", index=True)
    stop_reason: Mapped[str | None] = mapped_column(String, default=None)
    background: Mapped[bool | None] = mapped_column(Boolean, default=False)
    # `json`: its keys keep the order written, as Letta's (an error or result merged in later comes last).
    metadata_: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSON, default=None)
    request_config: Mapped[dict[str, Any] | None] = mapped_column(JSONB, default=None)
    callback_url: Mapped[str | None] = mapped_column(Text, default=None)
    callback_sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    callback_status_code: Mapped[int | None] = mapped_column(Integer, default=None)
    callback_error: Mapped[str | None] = mapped_column(Text, default=None)
    conversation_id: Mapped[str | None] = mapped_column(String, default=None)
    completed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    ttft_ns: Mapped[int | None] = mapped_column(BigInteger, default=None)
    total_duration_ns: Mapped[int | None] = mapped_column(BigInteger, default=None)
    # A run cancelled while it waited for an approval: how long it had run at the cancel (its metrics' run_ns).
    cancelled_run_ns: Mapped[int | None] = mapped_column(BigInteger, default=None)
    num_steps: Mapped[int] = mapped_column(Integer, default=0)
    tools_used: Mapped[list[str] | None] = mapped_column(JSONB, default=None)
    # The worker process running it and until when it vouches for it (renewed while it runs); see turns/lifecycle.py.
    worker_id: Mapped[str | None] = mapped_column(String, default=None)
    lease_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    # A streamed request's identity for retries: a hash of its messages' otids, and the otids themselves.
    request_token: Mapped[str | None] = mapped_column(String, default=None)
    otids: Mapped[list[str] | None] = mapped_column(JSONB, default=None)


class RunChunk(Base):
    """One SSE chunk of a streamed run, numbered 1, 2, 3 ... per run (`seq_id`); `final` marks its last one."""

    __tablename__ = "run_chunks"
    __table_args__ = (Index("ix_run_chunks_created", "created_at"),)

    run_id: Mapped[str] = mapped_column(String, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    seq_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    data: Mapped[str] = mapped_column(Text)
    final: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=text("now()"))


class Step(TimestampMixin, OrgScopedMixin, Base):
    """One LLM call of a run, with its usage."""

    __tablename__ = "steps"
    __table_args__ = (Index("ix_steps_run_created", "run_id", "created_at"),)

    id: Mapped[str] = mapped_column(String, primary_key=True)
    agent_id: Mapped[str | None] = mapped_column(String, ForeignKey("agents.id", ondelete="CASCADE"))
    run_id: Mapped[str | None] = mapped_column(String, ForeignKey("runs.id", ondelete="CASCADE"))
    provider_name: Mapped[str | None] = mapped_column(String, default=None)
    provider_category: Mapped[str | None] = mapped_column(String, default=None)
    provider_id: Mapped[str | None] = mapped_column(String, default=None)
    model: Mapped[str | None] = mapped_column(String, default=None)
    model_handle: Mapped[str | None] = mapped_column(String, default=None)
    model_endpoint: Mapped[str | None] = mapped_column(String, default=None)
    context_window_limit: Mapped[int | None] = mapped_column(Integer, default=None)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    total_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cached_input_tokens: Mapped[int | None] = mapped_column(Integer, default=None)
    cache_write_tokens: Mapped[int | None] = mapped_column(Integer, default=None)
    reasoning_tokens: Mapped[int | None] = mapped_column(Integer, default=None)
    stop_reason: Mapped[str | None] = mapped_column(String, default=None)
    status: Mapped[str] = mapped_column(String, default="pending")
    error_type: Mapped[str | None] = mapped_column(String, default=None)
    error_data: Mapped[dict[str, Any] | None] = mapped_column(JSONB, default=None)
    feedback: Mapped[str | None] = mapped_column(String, default=None)
    tags: Mapped[list[str] | None] = mapped_column(JSONB, default=None)
    trace_id: Mapped[str | None] = mapped_column(String, default=None)
    project_id: Mapped[str | None] = mapped_column(String, default=None)
    step_metrics: Mapped[dict[str, Any] | None] = mapped_column(JSONB, default=None)
