"""Run leases: the worker that runs a run, and until when it vouches for it (orphaned runs get closed).

Revision ID: 2026_11_23_run_leases
Revises: 0001
Create Date: 2026-11-23 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "2026_11_23_run_leases"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("worker_id", sa.String(), nullable=True))
    op.add_column("runs", sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index(
        "ix_runs_active_lease",
        "runs",
        ["lease_expires_at"],
        unique=False,
        postgresql_where=sa.text("status IN ('created', 'running')"),
    )


def downgrade() -> None:
    op.drop_index(
        "ix_runs_active_lease", table_name="runs", postgresql_where=sa.text("status IN ('created', 'running')")
    )
    op.drop_column("runs", "lease_expires_at")
    op.drop_column("runs", "worker_id")
