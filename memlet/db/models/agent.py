from datetime import datetime
from typing import Any

from sqlalchemy import ARRAY, BigInteger, Boolean, DateTime, ForeignKey, Index, Integer, String, Text
from sqlalchemy.dialects.postgresql import JSON, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from memlet.db.base import Base, OrgScopedMixin, TimestampMixin


class Agent(TimestampMixin, OrgScopedMixin, Base):
    """An agent. Model/embedding configs, rules and settings are JSONB documents in Letta's wire shapes."""

    __tablename__ = "agents"
    __table_args__ = (
        Index("ix_agents_org_created", "organization_id", "created_at", "id"),
        # List filters at scale (migration 2026-11-23_agent_list_indexes, which also adds a trigram index on name
        # for query_text where the server has pg_trgm).
        Index("ix_agents_org_name_created", "organization_id", "name", "created_at", "id"),
        Index("ix_agents_org_project_created", "organization_id", "project_id", "created_at", "id"),
    )

    id: Mapped[str] = mapped_column(String, primary_key=True)
    name: Mapped[str] = mapped_column(String)
    description: Mapped[str | None] = mapped_column(Text, default=None)
    agent_type: Mapped[str] = mapped_column(String, default="letta_v1_agent")
    system: Mapped[str] = mapped_column(Text, default="")
    # `json`, not `jsonb`, for what a user wrote (as Letta 0.16.8): its keys keep the caller's order (jsonb sorts
    # them by length). Where a structured-output schema lives (llm_config, model_settings, response_format), the
    # model writes its answer in that order; metadata and tool rules come back to the user as written.
    llm_config: Mapped[dict[str, Any]] = mapped_column(JSON)
    embedding_config: Mapped[dict[str, Any] | None] = mapped_column(JSONB, default=None)
    model_settings: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    compaction_settings: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    response_format: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    tool_rules: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # The in-context window: the system message first, then the buffer, oldest first. Stored uncompressed
    # (`STORAGE EXTERNAL`, migration 2026_11_24_window_storage): every step rewrites it.
    message_ids: Mapped[list[str]] = mapped_column(ARRAY(String), default=list)
    metadata_: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSON, default=None)
    secrets: Mapped[list[dict[str, Any]]] = mapped_column(JSONB, default=list)
    project_id: Mapped[str | None] = mapped_column(String, default=None)
    template_id: Mapped[str | None] = mapped_column(String, default=None)
    base_template_id: Mapped[str | None] = mapped_column(String, default=None)
    deployment_id: Mapped[str | None] = mapped_column(String, default=None)
    entity_id: Mapped[str | None] = mapped_column(String, default=None)
    message_buffer_autoclear: Mapped[bool] = mapped_column(Boolean, default=False)
    enable_sleeptime: Mapped[bool | None] = mapped_column(Boolean, default=None)
    last_run_completion: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    last_run_duration_ms: Mapped[int | None] = mapped_column(Integer, default=None)
    last_stop_reason: Mapped[str | None] = mapped_column(String, default=None)
    timezone: Mapped[str | None] = mapped_column(String, default="UTC")
    max_files_open: Mapped[int | None] = mapped_column(Integer, default=None)
    per_file_view_window_char_limit: Mapped[int | None] = mapped_column(Integer, default=None)
    hidden: Mapped[bool | None] = mapped_column(Boolean, default=None)
    # When the compiled system prompt was last rebuilt (shown in <memory_metadata>).
    system_compiled_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    # Every stored message of the agent, kept by triggers on `messages` (migration 2026-11-23_agent_message_count);
    # read with a query of its own, as the ORM copy of a loaded row does not follow the triggers.
    message_count: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")


class AgentTag(Base):
    __tablename__ = "agents_tags"

    agent_id: Mapped[str] = mapped_column(String, ForeignKey("agents.id", ondelete="CASCADE"), primary_key=True)
    tag: Mapped[str] = mapped_column(String, primary_key=True, index=True)
