"""Archives, their agents, and passages (archival memory; file passages later share the table).

A passage's vector is stored at its true dimension in a dimensionless `vector` column, with `embedding_dim`
beside it. pgvector cannot index a dimensionless column, so each accepted dimension has a partial HNSW index on
the expression `(embedding::vector(N))` with `WHERE embedding_dim = N` (see the migration
`2026-11-23_archival_passages.py`); a search names both, so the planner can use that index.
"""

from datetime import datetime
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import Boolean, DateTime, ForeignKey, Index, Integer, String, Text
from sqlalchemy.dialects.postgresql import ARRAY, JSON, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from memlet.db.base import Base, OrgScopedMixin, TimestampMixin, utcnow

# Dimensions with an HNSW index (pgvector indexes `vector` up to 2,000 dimensions). Others are refused (400).
INDEXED_DIMS = (256, 384, 512, 768, 1024, 1536)


class Archive(TimestampMixin, OrgScopedMixin, Base):
    """A named store of passages, attachable to several agents; every agent gets a default one on first insert."""

    __tablename__ = "archives"

    id: Mapped[str] = mapped_column(String, primary_key=True)
    name: Mapped[str] = mapped_column(String)
    description: Mapped[str | None] = mapped_column(Text, default=None)
    vector_db_provider: Mapped[str] = mapped_column(String, default="native")
    embedding_config: Mapped[dict[str, Any] | None] = mapped_column(JSONB, default=None)
    metadata_: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSONB, default=None)

    __table_args__ = (Index("ix_archives_org_created", "organization_id", "created_at", "id"),)


class ArchiveAgent(Base):
    """An archive attached to an agent; `is_owner` marks the agent's default archive (where inserts go)."""

    __tablename__ = "archives_agents"

    agent_id: Mapped[str] = mapped_column(String, ForeignKey("agents.id", ondelete="CASCADE"), primary_key=True)
    archive_id: Mapped[str] = mapped_column(
        String, ForeignKey("archives.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    is_owner: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Passage(TimestampMixin, OrgScopedMixin, Base):
    """One embedded chunk of text in an archive (`archive_id`) or, for file passages, a folder (`source_id`)."""

    __tablename__ = "passages"

    id: Mapped[str] = mapped_column(String, primary_key=True)
    archive_id: Mapped[str | None] = mapped_column(String, ForeignKey("archives.id", ondelete="CASCADE"))
    source_id: Mapped[str | None] = mapped_column(String, default=None)
    file_id: Mapped[str | None] = mapped_column(String, default=None, index=True)
    file_name: Mapped[str | None] = mapped_column(String, default=None)
    text: Mapped[str] = mapped_column(Text)
    embedding: Mapped[list[float] | None] = mapped_column(Vector(), default=None)
    embedding_dim: Mapped[int | None] = mapped_column(Integer, default=None)
    embedding_config: Mapped[dict[str, Any] | None] = mapped_column(JSONB, default=None)
    metadata_: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSON, default=dict)
    tags: Mapped[list[str] | None] = mapped_column(ARRAY(String), default=None)  # [] and null read back as given

    __table_args__ = (
        Index("ix_passages_archive_created", "archive_id", "created_at", "id"),
        Index("ix_passages_source_created", "source_id", "created_at", "id"),
        Index("ix_passages_tags", "tags", postgresql_using="gin"),
    )
