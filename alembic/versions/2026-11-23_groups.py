"""Groups: the groups table, its participants and shared blocks, and an index on messages.group_id.

Revision ID: 2026_11_23_groups
Revises: 2026_11_23_message_embeddings
Create Date: 2026-11-23 15:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "2026_11_23_groups"
down_revision: str | None = "2026_11_23_message_embeddings"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "groups",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("manager_type", sa.String(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False, server_default=""),
        sa.Column("project_id", sa.String(), nullable=True),
        sa.Column("template_id", sa.String(), nullable=True),
        sa.Column("base_template_id", sa.String(), nullable=True),
        sa.Column("deployment_id", sa.String(), nullable=True),
        sa.Column("manager_agent_id", sa.String(), sa.ForeignKey("agents.id", ondelete="RESTRICT"), nullable=True),
        sa.Column("termination_token", sa.String(), nullable=True),
        sa.Column("max_turns", sa.Integer(), nullable=True),
        sa.Column("sleeptime_agent_frequency", sa.Integer(), nullable=True),
        sa.Column("turns_counter", sa.Integer(), nullable=True),
        sa.Column("last_processed_message_id", sa.String(), nullable=True),
        sa.Column("max_message_buffer_length", sa.Integer(), nullable=True),
        sa.Column("min_message_buffer_length", sa.Integer(), nullable=True),
        sa.Column("hidden", sa.Boolean(), nullable=True),
        sa.Column(
            "organization_id", sa.String(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.Column("created_by_id", sa.String(), nullable=True),
        sa.Column("last_updated_by_id", sa.String(), nullable=True),
    )
    op.create_index("ix_groups_organization_id", "groups", ["organization_id"])
    op.create_index("ix_groups_org_created", "groups", ["organization_id", "created_at", "id"])
    op.create_index("ix_groups_deployment_id", "groups", ["deployment_id"])
    op.create_index("ix_groups_manager_agent_id", "groups", ["manager_agent_id"])
    op.create_table(
        "groups_agents",
        sa.Column("group_id", sa.String(), sa.ForeignKey("groups.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("agent_id", sa.String(), sa.ForeignKey("agents.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("position", sa.Integer(), nullable=False, server_default="0"),
    )
    op.create_index("ix_groups_agents_agent_id", "groups_agents", ["agent_id"])
    op.create_table(
        "groups_blocks",
        sa.Column("group_id", sa.String(), sa.ForeignKey("groups.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("block_id", sa.String(), sa.ForeignKey("blocks.id", ondelete="CASCADE"), primary_key=True),
    )
    op.create_index("ix_groups_blocks_block_id", "groups_blocks", ["block_id"])
    op.create_index("ix_messages_group_id", "messages", ["group_id"], postgresql_where=sa.text("group_id IS NOT NULL"))


def downgrade() -> None:
    op.drop_index("ix_messages_group_id", table_name="messages")
    op.drop_table("groups_blocks")
    op.drop_table("groups_agents")
    op.drop_table("groups")
