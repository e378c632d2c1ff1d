"""Conversations: parallel threads on one agent, each with its own context window and system message.

`message_ids` is the conversation's in-context window (its system message first), kept like `agents.message_ids`.
`conversation_messages` links every message of the conversation's history (its own rows, and the rows a fork
shares with its source); history order is `messages.sequence_id`, which is append-only and never renumbered.
`conversation_blocks` are the conversation's isolated copies of agent blocks, one per label.
"""

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, DateTime, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.dialects.postgresql import ARRAY, JSON
from sqlalchemy.orm import Mapped, mapped_column

from memlet.db.base import Base, OrgScopedMixin, TimestampMixin


class Conversation(TimestampMixin, OrgScopedMixin, Base):
    __tablename__ = "conversations"
    __table_args__ = (Index("ix_conversations_agent_created", "agent_id", "created_at"),)

    id: Mapped[str] = mapped_column(String, primary_key=True)
    agent_id: Mapped[str] = mapped_column(String, ForeignKey("agents.id", ondelete="CASCADE"))
    summary: Mapped[str | None] = mapped_column(Text, default=None)
    description: Mapped[str | None] = mapped_column(Text, default=None)
    model: Mapped[str | None] = mapped_column(String, default=None)
    model_settings: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)  # `json`: see Agent.llm_config
    context_window_limit: Mapped[int | None] = mapped_column(Integer, default=None)
    hidden: Mapped[bool] = mapped_column(Boolean, default=False)
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    archived_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    last_message_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    # Stored uncompressed, as the agent's (`STORAGE EXTERNAL`).
    message_ids: Mapped[list[str]] = mapped_column(ARRAY(String), default=list)


class ConversationMessage(Base):
    """A message in a conversation's history (its own, or shared with the source it was forked from)."""

    __tablename__ = "conversation_messages"

    conversation_id: Mapped[str] = mapped_column(
        String, ForeignKey("conversations.id", ondelete="CASCADE"), primary_key=True
    )
    message_id: Mapped[str] = mapped_column(
        String, ForeignKey("messages.id", ondelete="CASCADE"), primary_key=True, index=True
    )


class ConversationBlock(Base):
    """An isolated copy of an agent block, used by this conversation instead of the shared block."""

    __tablename__ = "conversation_blocks"
    __table_args__ = (UniqueConstraint("conversation_id", "block_label"),)

    conversation_id: Mapped[str] = mapped_column(
        String, ForeignKey("conversations.id", ondelete="CASCADE"), primary_key=True
    )
    block_id: Mapped[str] = mapped_column(String, ForeignKey("blocks.id", ondelete="CASCADE"), primary_key=True)
    block_label: Mapped[str] = mapped_column(String)
