"""Merge the conversations and run_chunks branches (both follow archival_passages).

Revision ID: 2026_11_23_merge_conv_chunks
Revises: 2026_11_23_conversations, 2026_11_23_run_chunks
"""

from collections.abc import Sequence

revision: str = "2026_11_23_merge_conv_chunks"
down_revision: str | Sequence[str] | None = ("2026_11_23_conversations", "2026_11_23_run_chunks")
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
