"""A passage's `tags` can be NULL: a passage written without tags reads `tags: null` and one written with
`tags: []` reads `[]`, as Letta 0.16.8 stores what it was given. Passages stored before this had `{}` either way
and read `null`, so they are set to NULL and read as before.

Revision ID: 2026_11_29_passage_tags_null
Revises: 2026_11_29_user_json_order
Create Date: 2026-11-29 19:30:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "2026_11_29_passage_tags_null"
down_revision: str | None = "2026_11_29_user_json_order"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE passages ALTER COLUMN tags DROP NOT NULL, ALTER COLUMN tags DROP DEFAULT")
    op.execute("UPDATE passages SET tags = NULL WHERE tags = '{}'")


def downgrade() -> None:
    op.execute("UPDATE passages SET tags = '{}' WHERE tags IS NULL")
    op.execute("ALTER TABLE passages ALTER COLUMN tags SET DEFAULT '{}', ALTER COLUMN tags SET NOT NULL")
