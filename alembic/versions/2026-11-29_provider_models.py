"""BYOK providers keep the models they last listed, so a provider that is down or slow still serves its handles.

Revision ID: 2026_11_29_provider_models
Revises: 2026_11_28_message_text_plpgsql
Create Date: 2026-11-29 08:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision: str = "2026_11_29_provider_models"
down_revision: str | None = "2026_11_28_message_text_plpgsql"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("providers", sa.Column("models", postgresql.JSONB(), nullable=True))


def downgrade() -> None:
    op.drop_column("providers", "models")
