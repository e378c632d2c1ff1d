"""Conversations: threads on one agent with their own context window, history links and isolated blocks.

Revision ID: 2026_11_23_conversations
Revises: 2026_11_23_run_chunks
Create Date: 2026-11-23 13:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision: str = "2026_11_23_conversations"
down_revision: str | None = "2026_11_23_run_chunks"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "conversations",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("agent_id", sa.String(), sa.ForeignKey("agents.id", ondelete="CASCADE"), nullable=False),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("model", sa.String(), nullable=True),
        sa.Column("model_settings", postgresql.JSONB(), nullable=True),
        sa.Column("context_window_limit", sa.Integer(), nullable=True),
        sa.Column("hidden", sa.Boolean(), nullable=False),
        sa.Column("archived", sa.Boolean(), nullable=False),
        sa.Column("archived_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_message_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("message_ids", postgresql.ARRAY(sa.String()), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("created_by_id", sa.String(), nullable=True),
        sa.Column("last_updated_by_id", sa.String(), nullable=True),
        sa.Column(
            "organization_id", sa.String(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
    )
    op.create_index("ix_conversations_organization_id", "conversations", ["organization_id"])
    op.create_index("ix_conversations_agent_created", "conversations", ["agent_id", "created_at"])
    op.create_table(
        "conversation_messages",
        sa.Column(
            "conversation_id",
            sa.String(),
            sa.ForeignKey("conversations.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("message_id", sa.String(), sa.ForeignKey("messages.id", ondelete="CASCADE"), primary_key=True),
    )
    op.create_index("ix_conversation_messages_message_id", "conversation_messages", ["message_id"])
    op.create_table(
        "conversation_blocks",
        sa.Column(
            "conversation_id",
            sa.String(),
            sa.ForeignKey("conversations.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("block_id", sa.String(), sa.ForeignKey("blocks.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("block_label", sa.String(), nullable=False),
        sa.UniqueConstraint("conversation_id", "block_label"),
    )
    op.create_index("ix_runs_conversation_id", "runs", ["conversation_id"])


def downgrade() -> None:
    op.drop_index("ix_runs_conversation_id", table_name="runs")
    op.drop_table("conversation_blocks")
    op.drop_table("conversation_messages")
    op.drop_table("conversations")
