"""MCP servers (credentials sealed) and their OAuth sessions.

Revision ID: 2026_11_23_mcp_servers
Revises: 2026_11_23_conversations
Create Date: 2026-11-23 14:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision: str = "2026_11_23_mcp_servers"
down_revision: str | None = "2026_11_23_conversations"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _stamps() -> list[sa.Column]:
    return [
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("created_by_id", sa.String(), nullable=True),
        sa.Column("last_updated_by_id", sa.String(), nullable=True),
        sa.Column("organization_id", sa.String(), nullable=False),
    ]


def upgrade() -> None:
    op.create_table(
        "mcp_servers",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("server_name", sa.String(), nullable=False),
        sa.Column("server_type", sa.String(), nullable=False),
        sa.Column("server_url", sa.Text(), nullable=True),
        sa.Column("command", sa.Text(), nullable=True),
        sa.Column("args", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("env_enc", sa.Text(), nullable=True),
        sa.Column("auth_header", sa.String(), nullable=True),
        sa.Column("auth_token_enc", sa.Text(), nullable=True),
        sa.Column("custom_headers_enc", sa.Text(), nullable=True),
        sa.Column("metadata", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        *_stamps(),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_mcp_servers_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mcp_servers")),
        sa.UniqueConstraint("organization_id", "server_name", name=op.f("uq_mcp_servers_organization_id_server_name")),
    )
    op.create_index(op.f("ix_mcp_servers_organization_id"), "mcp_servers", ["organization_id"])
    op.create_table(
        "mcp_oauth_sessions",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("server_id", sa.String(), nullable=True),
        sa.Column("server_url", sa.Text(), nullable=False),
        sa.Column("server_name", sa.String(), nullable=True),
        sa.Column("state", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("authorization_url", sa.Text(), nullable=True),
        sa.Column("code_enc", sa.Text(), nullable=True),
        sa.Column("tokens_enc", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        *_stamps(),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_mcp_oauth_sessions_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["server_id"],
            ["mcp_servers.id"],
            name=op.f("fk_mcp_oauth_sessions_server_id_mcp_servers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mcp_oauth_sessions")),
        sa.UniqueConstraint("state", name=op.f("uq_mcp_oauth_sessions_state")),
    )
    op.create_index(op.f("ix_mcp_oauth_sessions_organization_id"), "mcp_oauth_sessions", ["organization_id"])
    op.create_index(op.f("ix_mcp_oauth_sessions_server_id"), "mcp_oauth_sessions", ["server_id"])
    # Tools discovered from a server are found by the server id in their metadata.
    op.create_index(
        "ix_tools_mcp_server_id",
        "tools",
        [sa.text("(metadata -> 'mcp' ->> 'server_id')")],
        postgresql_where=sa.text("tool_type = 'external_mcp'"),
    )


def downgrade() -> None:
    op.drop_index("ix_tools_mcp_server_id", table_name="tools")
    op.drop_table("mcp_oauth_sessions")
    op.drop_table("mcp_servers")
