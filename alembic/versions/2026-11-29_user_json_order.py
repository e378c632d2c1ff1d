"""What a user writes as free-form JSON keeps its key order: `json` instead of `jsonb` (which sorts an object's keys
by length) for the agents' `metadata`, `tool_rules` (a conditional rule's `child_output_mapping`) and
`compaction_settings`, the blocks', tools', folders' and passages' `metadata` and the identities' `properties`, as
Letta 0.16.8 stores them. A custom tool reading `agent_state.metadata` hands the model what the user wrote.

`tools.metadata` keeps its index on `metadata -> 'mcp' ->> 'server_id'` (rebuilt by the type change: `json` has
the same operators). Values stored before this keep jsonb's order until they are written again.

Revision ID: 2026_11_29_user_json_order
Revises: 2026_11_29_output_schema_order
Create Date: 2026-11-29 18:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "2026_11_29_user_json_order"
down_revision: str | None = "2026_11_29_output_schema_order"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = (
    ("agents", "metadata"),
    ("agents", "tool_rules"),
    ("agents", "compaction_settings"),
    ("blocks", "metadata"),
    ("tools", "metadata"),
    ("sources", "metadata"),
    ("passages", "metadata"),
    ("identities", "properties"),
)


def upgrade() -> None:
    for table, column in COLUMNS:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE json USING {column}::json")


def downgrade() -> None:
    for table, column in COLUMNS:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE jsonb USING {column}::jsonb")
