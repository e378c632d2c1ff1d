from typing import Any

from sqlalchemy import BigInteger, Boolean, ForeignKey, Identity, Index, String
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from memlet.db.base import Base, OrgScopedMixin, TimestampMixin


class Message(TimestampMixin, OrgScopedMixin, Base):
    """A stored message (Letta's internal ``Message``). ``sequence_id`` orders everything."""

    __tablename__ = "messages"
    __table_args__ = (
        Index("ix_messages_agent_seq", "agent_id", "sequence_id"),
        Index("ix_messages_run_seq", "run_id", "sequence_id"),
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
