"""A run's `metadata` keeps its key order: `json` instead of `jsonb` (which sorts an object's keys by length), as
Letta 0.16.8 stores it, so a run reads `{"run_type": ..., "lettuce": ...}` as written and an `error` or `result`
added later comes last. Values stored before this keep jsonb's order.

Revision ID: 2026_11_29_run_metadata_order
Revises: 2026_11_29_passage_tags_null
Create Date: 2026-11-29 19:45:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "2026_11_29_run_metadata_order"
down_revision: str | None = "2026_11_29_passage_tags_null"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE runs ALTER COLUMN metadata TYPE json USING metadata::json")


def downgrade() -> None:
    op.execute("ALTER TABLE runs ALTER COLUMN metadata TYPE jsonb USING metadata::jsonb")
