"""Structured-output schemas keep their key order: the agents' `llm_config`, `model_settings` and `response_format`
and the conversations' `model_settings` become `json` instead of `jsonb` (which sorts an object's keys by length, so
a `{reasoning, answer}` schema reached the model as `{answer, reasoning}` and the model answered before reasoning;
Letta 0.16.8 stores these in `json` columns).

Values stored before this keep jsonb's order until they are written again.

Revision ID: 2026_11_29_output_schema_order
Revises: 2026_11_29_tool_schema_order
Create Date: 2026-11-29 17:30:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "2026_11_29_output_schema_order"
down_revision: str | None = "2026_11_29_tool_schema_order"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = (
    ("agents", "llm_config"),
    ("agents", "model_settings"),
    ("agents", "response_format"),
    ("conversations", "model_settings"),
)


def upgrade() -> None:
    for table, column in COLUMNS:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE json USING {column}::json")


def downgrade() -> None:
    for table, column in COLUMNS:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE jsonb USING {column}::jsonb")
