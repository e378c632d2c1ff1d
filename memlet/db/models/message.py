from datetime import datetime
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import BigInteger, Boolean, DateTime, ForeignKey, Identity, Index, Integer, String, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from memlet.db.base import Base, OrgScopedMixin, TimestampMixin, utcnow


class Message(TimestampMixin, OrgScopedMixin, Base):
    """A stored message (Letta's internal ``Message``). ``sequence_id`` orders everything."""

    __tablename__ = "messages"
    __table_args__ = (
        Index("ix_messages_agent_seq", "agent_id", "sequence_id"),
        Index("ix_messages_run_seq", "run_id", "sequence_id"),
        Index("ix_messages_group_id", "group_id", postgresql_where=text("group_id IS NOT NULL")),
    )

    id: Mapped[str] = mapped_column(String, primary_key=True)
    agent_id: Mapped[str] = mapped_column(String, ForeignKey("agents.id", ondelete="CASCADE"))
    sequence_id: Mapped[int] = mapped_column(BigInteger, Identity(always=False), unique=True)
    role: Mapped[str] = mapped_column(String)
    content: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONB, default=None)
    tool_calls: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONB, default=None)
    tool_call_id: Mapped[str | None] = mapped_column(String, default=None)
    tool_returns: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONB, default=None)
    name: Mapped[str | None] = mapped_column(String, default=None)
    model: Mapped[str | None] = mapped_column(String, default=None)
    step_id: Mapped[str | None] = mapped_column(String, default=None, index=True)
    run_id: Mapped[str | None] = mapped_column(String, default=None)
    otid: Mapped[str | None] = mapped_column(String, default=None)
    sender_id: Mapped[str | None] = mapped_column(String, default=None)
    group_id: Mapped[str | None] = mapped_column(String, default=None)
    batch_item_id: Mapped[str | None] = mapped_column(String, default=None)
    conversation_id: Mapped[str | None] = mapped_column(String, default=None)
    is_err: Mapped[bool | None] = mapped_column(Boolean, default=None)
    approval_request_id: Mapped[str | None] = mapped_column(String, default=None)
    approve: Mapped[bool | None] = mapped_column(Boolean, default=None)
    denial_reason: Mapped[str | None] = mapped_column(String, default=None)
    approvals: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONB, default=None)


class MessageEmbedding(Base):
    """A message's vector for hybrid search, stored at its true dimension (indexed per dimension, as passages).

    Written only by the background worker (`memlet.passages.message_indexer`) when `embed_messages` is on.
    """

    __tablename__ = "message_embeddings"

    message_id: Mapped[str] = mapped_column(String, ForeignKey("messages.id", ondelete="CASCADE"), primary_key=True)
    agent_id: Mapped[str] = mapped_column(String, ForeignKey("agents.id", ondelete="CASCADE"), index=True)
    organization_id: Mapped[str] = mapped_column(String, ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    embedding: Mapped[list[float]] = mapped_column(Vector())
    embedding_dim: Mapped[int] = mapped_column(Integer)
    embedding_model: Mapped[str] = mapped_column(String)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
