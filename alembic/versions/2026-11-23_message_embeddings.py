"""Message embeddings for hybrid message search: one row per embedded message, its vector at its true dimension,
one partial HNSW (cosine) index per accepted dimension (as passages).

Only written when `MEMLET_EMBED_MESSAGES` is on, by a background worker, never on the send path.

Revision ID: 2026_11_23_message_embeddings
Revises: 2026_11_23_message_search
Create Date: 2026-11-23 14:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from pgvector.sqlalchemy import Vector

from alembic import op

revision: str = "2026_11_23_message_embeddings"
down_revision: str | None = "2026_11_23_message_search"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# memlet.db.models.passage.INDEXED_DIMS at the time of this migration.
INDEXED_DIMS = (256, 384, 512, 768, 1024, 1536)


def upgrade() -> None:
    op.create_table(
        "message_embeddings",
        sa.Column("message_id", sa.String(), sa.ForeignKey("messages.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("agent_id", sa.String(), sa.ForeignKey("agents.id", ondelete="CASCADE"), nullable=False),
        sa.Column(
            "organization_id", sa.String(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("embedding", Vector(), nullable=False),
        sa.Column("embedding_dim", sa.Integer(), nullable=False),
        sa.Column("embedding_model", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.CheckConstraint("vector_dims(embedding) = embedding_dim", name="ck_message_embeddings_dim"),
    )
    op.create_index("ix_message_embeddings_agent_id", "message_embeddings", ["agent_id"])
    op.create_index("ix_message_embeddings_organization_id", "message_embeddings", ["organization_id"])
    for dim in INDEXED_DIMS:
        op.execute(
            f"CREATE INDEX ix_message_embeddings_{dim} ON message_embeddings "
            f"USING hnsw ((embedding::vector({dim})) vector_cosine_ops) WHERE embedding_dim = {dim}"
        )


def downgrade() -> None:
    op.drop_table("message_embeddings")
