"""Steps record the prompt tokens a provider wrote to its cache (Anthropic's cache_creation_input_tokens).

Revision ID: 2026_11_23_step_cache_writes
Revises: 2026_11_23_batches
Create Date: 2026-11-23 14:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "2026_11_23_step_cache_writes"
down_revision: str | None = "2026_11_23_batches"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("steps", sa.Column("cache_write_tokens", sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column("steps", "cache_write_tokens")
