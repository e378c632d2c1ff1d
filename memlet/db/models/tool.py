from typing import Any

from sqlalchemy import Boolean, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSON, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from memlet.db.base import Base, OrgScopedMixin, TimestampMixin


class Tool(TimestampMixin, OrgScopedMixin, Base):
    __tablename__ = "tools"
    __table_args__ = (UniqueConstraint("organization_id", "name"),)

    id: Mapped[str] = mapped_column(String, primary_key=True)
    name: Mapped[str] = mapped_column(String)
    tool_type: Mapped[str] = mapped_column(String, default="custom")
    description: Mapped[str | None] = mapped_column(Text, default=None)
    source_type: Mapped[str | None] = mapped_column(String, default=None)
    source_code: Mapped[str | None] = mapped_column(Text, default=None)
    # `json`, not `jsonb`: a schema keeps its keys in the order it was built (jsonb sorts them by length), so the
    # model sees a tool's parameters in its function's order, as Letta stores them.
    json_schema: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    args_json_schema: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    return_char_limit: Mapped[int] = mapped_column(Integer, default=50000)
    tags: Mapped[list[str]] = mapped_column(JSONB, default=list)
    pip_requirements: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONB, default=None)
    npm_requirements: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONB, default=None)
    default_requires_approval: Mapped[bool | None] = mapped_column(Boolean, default=None)
    enable_parallel_execution: Mapped[bool | None] = mapped_column(Boolean, default=False)
    project_id: Mapped[str | None] = mapped_column(String, default=None)
    metadata_: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSON, default=dict)


class ToolAgent(Base):
    __tablename__ = "tools_agents"

    agent_id: Mapped[str] = mapped_column(String, ForeignKey("agents.id", ondelete="CASCADE"), primary_key=True)
    tool_id: Mapped[str] = mapped_column(
        String, ForeignKey("tools.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    position: Mapped[int] = mapped_column(Integer, default=0)
