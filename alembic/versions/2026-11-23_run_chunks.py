"""Run chunks: every SSE chunk of a streamed run with its seq_id (background streams, resume), and the request
token of a streamed send (a retry with the same otids attaches to the first run).

Revision ID: 2026_11_23_run_chunks
Revises: 2026_11_23_archival_passages
Create Date: 2026-11-23 13:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision: str = "2026_11_23_run_chunks"
down_revision: str | None = "2026_11_23_archival_passages"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ACTIVE_REQUEST = "request_token IS NOT NULL AND status IN ('created', 'running')"


def upgrade() -> None:
    op.create_table(
        "run_chunks",
        sa.Column("run_id", sa.String(), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("seq_id", sa.Integer(), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.Column("final", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.text("now()")),
        sa.PrimaryKeyConstraint("run_id", "seq_id", name="pk_run_chunks"),
    )
    op.create_index("ix_run_chunks_created", "run_chunks", ["created_at"])
    op.add_column("runs", sa.Column("request_token", sa.String(), nullable=True))
    op.add_column("runs", sa.Column("otids", postgresql.JSONB(), nullable=True))
    op.create_index(
        "ux_runs_active_request",
        "runs",
        ["agent_id", "request_token"],
        unique=True,
        postgresql_where=sa.text(ACTIVE_REQUEST),
    )


def downgrade() -> None:
    op.drop_index("ux_runs_active_request", table_name="runs", postgresql_where=sa.text(ACTIVE_REQUEST))
    op.drop_column("runs", "otids")
    op.drop_column("runs", "request_token")
    op.drop_index("ix_run_chunks_created", table_name="run_chunks")
    op.drop_table("run_chunks")
