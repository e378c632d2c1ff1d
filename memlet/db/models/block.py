from typing import Any

from sqlalchemy import Boolean, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSON, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from memlet.db.base import Base, OrgScopedMixin, TimestampMixin


class Block(TimestampMixin, OrgScopedMixin, Base):
    """A core-memory block. One row however many agents share it, so an edit is seen by all of them."""

    __tablename__ = "blocks"

    id: Mapped[str] = mapped_column(String, primary_key=True)
    label: Mapped[str] = mapped_column(String, index=True)
    value: Mapped[str] = mapped_column(Text, default="")
    limit: Mapped[int] = mapped_column(Integer)
    description: Mapped[str | None] = mapped_column(Text, default=None)
    read_only: Mapped[bool] = mapped_column(Boolean, default=False)
    hidden: Mapped[bool | None] = mapped_column(Boolean, default=None)
    is_template: Mapped[bool] = mapped_column(Boolean, default=False)
    template_name: Mapped[str | None] = mapped_column(String, default=None)
    template_id: Mapped[str | None] = mapped_column(String, default=None)
    base_template_id: Mapped[str | None] = mapped_column(String, default=None)
    deployment_id: Mapped[str | None] = mapped_column(String, default=None)
    entity_id: Mapped[str | None] = mapped_column(String, default=None)
    preserve_on_migration: Mapped[bool | None] = mapped_column(Boolean, default=False)
    project_id: Mapped[str | None] = mapped_column(String, default=None)
    metadata_: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSON, default=dict)
    tags: Mapped[list[str] | None] = mapped_column(JSONB, default=None)


class BlockAgent(Base):
    """Attachment of a block to an agent; the label is copied here so it is unique per agent."""

    __tablename__ = "blocks_agents"
    __table_args__ = (UniqueConstraint("agent_id", "block_label"),)

    agent_id: Mapped[str] = mapped_column(String, ForeignKey("agents.id", ondelete="CASCADE"), primary_key=True)
    block_id: Mapped[str] = mapped_column(
        String, ForeignKey("blocks.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    block_label: Mapped[str] = mapped_column(String)
    position: Mapped[int] = mapped_column(Integer, default=0)
