"""Archives, their agents and passages; one partial HNSW (cosine) index per accepted embedding dimension.

Vectors keep their true dimension in a dimensionless `vector` column. pgvector cannot index that column as is,
so each accepted dimension N gets `hnsw ((embedding::vector(N)) vector_cosine_ops) WHERE embedding_dim = N`;
searches cast the same way and filter on the same predicate, so the planner picks that index.

Revision ID: 2026_11_23_archival_passages
Revises: 2026_11_23_run_leases
Create Date: 2026-11-23 12:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects import postgresql

from alembic import op

revision: str = "2026_11_23_archival_passages"
down_revision: str | None = "2026_11_23_run_leases"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# memlet.db.models.passage.INDEXED_DIMS at the time of this migration.
INDEXED_DIMS = (256, 384, 512, 768, 1024, 1536)


def _timestamps() -> list[sa.Column]:  # type: ignore[type-arg]
    return [
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("created_by_id", sa.String(), nullable=True),
        sa.Column("last_updated_by_id", sa.String(), nullable=True),
    ]


def _org() -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(
        "organization_id",
        sa.String(),
        sa.ForeignKey("organizations.id", ondelete="CASCADE"),
        nullable=False,
    )


def upgrade() -> None:
    op.create_table(
        "archives",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("vector_db_provider", sa.String(), nullable=False, server_default="native"),
        sa.Column("embedding_config", postgresql.JSONB(), nullable=True),
        sa.Column("metadata", postgresql.JSONB(), nullable=True),
        *_timestamps(),
        _org(),
    )
    op.create_index("ix_archives_organization_id", "archives", ["organization_id"])
    op.create_index("ix_archives_org_created", "archives", ["organization_id", "created_at", "id"])
    op.create_table(
        "archives_agents",
        sa.Column("agent_id", sa.String(), sa.ForeignKey("agents.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("archive_id", sa.String(), sa.ForeignKey("archives.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("is_owner", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
    )
    op.create_index("ix_archives_agents_archive_id", "archives_agents", ["archive_id"])
    op.create_table(
        "passages",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("archive_id", sa.String(), sa.ForeignKey("archives.id", ondelete="CASCADE"), nullable=True),
        sa.Column("source_id", sa.String(), nullable=True),
        sa.Column("file_id", sa.String(), nullable=True),
        sa.Column("file_name", sa.String(), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("embedding", Vector(), nullable=True),
        sa.Column("embedding_dim", sa.Integer(), nullable=True),
        sa.Column("embedding_config", postgresql.JSONB(), nullable=True),
        sa.Column("metadata", postgresql.JSONB(), nullable=True),
        sa.Column("tags", sa.ARRAY(sa.String()), nullable=False, server_default="{}"),
        *_timestamps(),
        _org(),
        sa.CheckConstraint(
            "embedding IS NULL OR vector_dims(embedding) = embedding_dim", name="ck_passages_embedding_dim"
        ),
    )
    op.create_index("ix_passages_organization_id", "passages", ["organization_id"])
    op.create_index("ix_passages_file_id", "passages", ["file_id"])
    op.create_index("ix_passages_archive_created", "passages", ["archive_id", "created_at", "id"])
    op.create_index("ix_passages_source_created", "passages", ["source_id", "created_at", "id"])
    op.create_index("ix_passages_tags", "passages", ["tags"], postgresql_using="gin")
    for dim in INDEXED_DIMS:
        op.execute(
            f"CREATE INDEX ix_passages_embedding_{dim} ON passages "
            f"USING hnsw ((embedding::vector({dim})) vector_cosine_ops) WHERE embedding_dim = {dim}"
        )


def downgrade() -> None:
    op.drop_table("passages")
    op.drop_table("archives_agents")
    op.drop_table("archives")
