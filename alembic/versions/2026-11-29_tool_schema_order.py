"""Tools keep their JSON schemas as built: `json` instead of `jsonb` (which sorts an object's keys by length, so the
model saw `memory_replace(label, new_string, old_string)` and a custom tool's parameters out of its function's
order; Letta 0.16.8 stores them in `json` columns).

Schemas stored before this keep jsonb's order until they are written again (Letta's built-in tools are rewritten at
every start-up).

Revision ID: 2026_11_29_tool_schema_order
Revises: 2026_11_29_provider_models
Create Date: 2026-11-29 17:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "2026_11_29_tool_schema_order"
down_revision: str | None = "2026_11_29_provider_models"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ("json_schema", "args_json_schema")


def upgrade() -> None:
    for column in COLUMNS:
        op.execute(f"ALTER TABLE tools ALTER COLUMN {column} TYPE json USING {column}::json")


def downgrade() -> None:
    for column in COLUMNS:
        op.execute(f"ALTER TABLE tools ALTER COLUMN {column} TYPE jsonb USING {column}::jsonb")
