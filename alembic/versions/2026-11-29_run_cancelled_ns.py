"""`runs.cancelled_run_ns`: how long a run that stopped for an approval had run when a client cancelled it, from
its start. Letta's run metrics count such a run until the cancel (`/v1/runs/{id}/metrics` `run_ns`) while the run
keeps the duration it stopped with (`total_duration_ns`); memlet showed that duration in both.

Revision ID: 2026_11_29_run_cancelled_ns
Revises: 2026_11_29_run_metadata_order
Create Date: 2026-11-29 20:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "2026_11_29_run_cancelled_ns"
down_revision: str | None = "2026_11_29_run_metadata_order"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("cancelled_run_ns", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    op.drop_column("runs", "cancelled_run_ns")
