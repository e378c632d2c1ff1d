"""Folders (sources), their files and file text, folder and file attachments to agents; file passages cascade.

File passages live in `passages` (source_id, file_id): foreign keys added here delete them with their file or
folder.

Revision ID: 2026_11_23_folders_files
Revises: 2026_11_23_archival_passages
Create Date: 2026-11-23 13:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision: str = "2026_11_23_folders_files"
down_revision: str | None = "2026_11_23_archival_passages"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _timestamps() -> list[sa.Column]:  # type: ignore[type-arg]
    return [
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("created_by_id", sa.String(), nullable=True),
        sa.Column("last_updated_by_id", sa.String(), nullable=True),
    ]


def _org() -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(
        "organization_id", sa.String(), sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False
    )


def _fk(column: str, table: str) -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(column, sa.String(), sa.ForeignKey(f"{table}.id", ondelete="CASCADE"), nullable=False)


def upgrade() -> None:
    op.create_table(
        "sources",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("instructions", sa.Text(), nullable=True),
        sa.Column("embedding_config", postgresql.JSONB(), nullable=False),
        sa.Column("metadata", postgresql.JSONB(), nullable=True),
        sa.Column("vector_db_provider", sa.String(), nullable=False, server_default="native"),
        *_timestamps(),
        _org(),
        sa.UniqueConstraint("organization_id", "name", name="uq_sources_org_name"),
    )
    op.create_index("ix_sources_organization_id", "sources", ["organization_id"])
    op.create_index("ix_sources_org_created", "sources", ["organization_id", "created_at", "id"])
    op.create_table(
        "sources_agents",
        sa.Column("agent_id", sa.String(), sa.ForeignKey("agents.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("source_id", sa.String(), sa.ForeignKey("sources.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
    )
    op.create_index("ix_sources_agents_source_id", "sources_agents", ["source_id"])
    op.create_table(
        "files",
        sa.Column("id", sa.String(), primary_key=True),
        _fk("source_id", "sources"),
        sa.Column("file_name", sa.String(), nullable=False),
        sa.Column("original_file_name", sa.String(), nullable=False),
        sa.Column("file_path", sa.String(), nullable=True),
        sa.Column("file_type", sa.String(), nullable=True),
        sa.Column("file_size", sa.Integer(), nullable=True),
        sa.Column("file_creation_date", sa.String(), nullable=True),
        sa.Column("file_last_modified_date", sa.String(), nullable=True),
        sa.Column("processing_status", sa.String(), nullable=False, server_default="pending"),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("total_chunks", sa.Integer(), nullable=True),
        sa.Column("chunks_embedded", sa.Integer(), nullable=True),
        *_timestamps(),
        _org(),
    )
    op.create_index("ix_files_organization_id", "files", ["organization_id"])
    op.create_index("ix_files_processing_status", "files", ["processing_status"])
    op.create_index("ix_files_source_created", "files", ["source_id", "created_at", "id"])
    op.create_table(
        "file_contents",
        sa.Column("file_id", sa.String(), sa.ForeignKey("files.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("raw", sa.LargeBinary(), nullable=True),
    )
    op.create_table(
        "files_agents",
        sa.Column("id", sa.String(), primary_key=True),
        _fk("agent_id", "agents"),
        _fk("file_id", "files"),
        _fk("source_id", "sources"),
        sa.Column("file_name", sa.String(), nullable=False),
        sa.Column("is_open", sa.Boolean(), nullable=False, server_default=sa.true()),
        sa.Column("visible_content", sa.Text(), nullable=True),
        sa.Column("last_accessed_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("start_line", sa.Integer(), nullable=True),
        sa.Column("end_line", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        _org(),
        sa.UniqueConstraint("agent_id", "file_id", name="uq_files_agents_agent_file"),
        sa.UniqueConstraint("agent_id", "file_name", name="uq_files_agents_agent_name"),
    )
    op.create_index("ix_files_agents_organization_id", "files_agents", ["organization_id"])
    op.create_index("ix_files_agents_file_id", "files_agents", ["file_id"])
    op.create_index("ix_files_agents_source_id", "files_agents", ["source_id"])
    op.create_foreign_key(
        "fk_passages_source_id_sources", "passages", "sources", ["source_id"], ["id"], ondelete="CASCADE"
    )
    op.create_foreign_key("fk_passages_file_id_files", "passages", "files", ["file_id"], ["id"], ondelete="CASCADE")


def downgrade() -> None:
    op.drop_constraint("fk_passages_file_id_files", "passages", type_="foreignkey")
    op.drop_constraint("fk_passages_source_id_sources", "passages", type_="foreignkey")
    op.drop_table("files_agents")
    op.drop_table("file_contents")
    op.drop_table("files")
    op.drop_table("sources_agents")
    op.drop_table("sources")
