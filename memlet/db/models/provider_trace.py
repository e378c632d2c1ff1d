from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, ForeignKey, Index, String, func
from sqlalchemy.dialects.postgresql import JSON
from sqlalchemy.orm import Mapped, mapped_column

from memlet.db.base import Base


class ProviderTrace(Base):
    """The raw request and response of one LLM call, kept per step (Letta's `provider_traces`, on by default).

    The JSON columns are `json`, not `jsonb`: the request is stored as the bytes that were posted (key order
    kept), and Postgres only checks the text instead of parsing it into a tree. The row goes with its step (and
    so with the step's agent and run)."""

    __tablename__ = "provider_traces"
    __table_args__ = (Index("ix_provider_traces_step_id", "step_id"),)

    id: Mapped[str] = mapped_column(String, primary_key=True)
    organization_id: Mapped[str] = mapped_column(String)
    step_id: Mapped[str] = mapped_column(String, ForeignKey("steps.id", ondelete="CASCADE"))
    agent_id: Mapped[str | None] = mapped_column(String, default=None)
    run_id: Mapped[str | None] = mapped_column(String, default=None)
    user_id: Mapped[str | None] = mapped_column(String, default=None)
    call_type: Mapped[str | None] = mapped_column(String, default=None)
    agent_tags: Mapped[list[str] | None] = mapped_column(JSON, default=None)
    llm_config: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    request_json: Mapped[dict[str, Any]] = mapped_column(JSON)
    response_json: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
