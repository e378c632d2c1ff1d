"""The in-context windows (`agents.message_ids`, `conversations.message_ids`) are stored without compression.

Every step appends to its thread's window, so Postgres writes the whole array again. Past ~2 KB (about 45 ids)
it tried to compress it with pglz each time: ids are random and barely compress, so the attempt failed and was
thrown away. With 1,000 ids (48 KB) that cost ~1 ms of Postgres CPU per append; `EXTERNAL` (out of line,
uncompressed) makes the append ~0.2 ms. Existing rows keep their form until their next write.

Revision ID: 2026_11_24_window_storage
Revises: 2026_11_23_message_search_cols
Create Date: 2026-11-24 09:40:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "2026_11_24_window_storage"
down_revision: str | None = "2026_11_23_message_search_cols"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_WINDOWS = ("agents", "conversations")


def upgrade() -> None:
    for table in _WINDOWS:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN message_ids SET STORAGE EXTERNAL")


def downgrade() -> None:
    for table in _WINDOWS:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN message_ids SET STORAGE EXTENDED")
