"""Folders (Letta's `sources`), their files, the files' text, and which agents see which folder and file.

A file's extracted text lives in `file_contents`, apart from the metadata row, so listing files never reads it.
`file_contents.raw` keeps the uploaded bytes until the file is processed: a file still pending, parsing or
embedding when the server stops is processed again from them at the next start.
"""

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, DateTime, ForeignKey, Index, Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSON, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from memlet.db.base import Base, OrgScopedMixin, TimestampMixin, utcnow

# A file's processing_status: pending → parsing → embedding → completed, or error from any unfinished state.
UNFINISHED_STATUSES = ("pending", "parsing", "embedding")


class Source(TimestampMixin, OrgScopedMixin, Base):
    """A folder of files; its embedding_config embeds the files' passages."""

    __tablename__ = "sources"
    __table_args__ = (
        UniqueConstraint("organization_id", "name", name="uq_sources_org_name"),
        Index("ix_sources_org_created", "organization_id", "created_at", "id"),
    )

    id: Mapped[str] = mapped_column(String, primary_key=True)
    name: Mapped[str] = mapped_column(String)
    description: Mapped[str | None] = mapped_column(Text, default=None)
    instructions: Mapped[str | None] = mapped_column(Text, default=None)
    embedding_config: Mapped[dict[str, Any]] = mapped_column(JSONB)
    metadata_: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSON, default=None)
    vector_db_provider: Mapped[str] = mapped_column(String, default="native")


class SourceAgent(Base):
    """A folder attached to an agent."""

    __tablename__ = "sources_agents"

    agent_id: Mapped[str] = mapped_column(String, ForeignKey("agents.id", ondelete="CASCADE"), primary_key=True)
    source_id: Mapped[str] = mapped_column(
        String, ForeignKey("sources.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class FileMetadata(TimestampMixin, OrgScopedMixin, Base):
    """One uploaded file of a folder. `file_name` is "<folder name>/<name>", unique within the folder."""

    __tablename__ = "files"
    __table_args__ = (Index("ix_files_source_created", "source_id", "created_at", "id"),)

    id: Mapped[str] = mapped_column(String, primary_key=True)
    source_id: Mapped[str] = mapped_column(String, ForeignKey("sources.id", ondelete="CASCADE"))
    file_name: Mapped[str] = mapped_column(String)
    original_file_name: Mapped[str] = mapped_column(String)
    file_path: Mapped[str | None] = mapped_column(String, default=None)
    file_type: Mapped[str | None] = mapped_column(String, default=None)
    file_size: Mapped[int | None] = mapped_column(Integer, default=None)
    file_creation_date: Mapped[str | None] = mapped_column(String, default=None)
    file_last_modified_date: Mapped[str | None] = mapped_column(String, default=None)
    processing_status: Mapped[str] = mapped_column(String, default="pending", index=True)
    error_message: Mapped[str | None] = mapped_column(Text, default=None)
    total_chunks: Mapped[int | None] = mapped_column(Integer, default=None)
    chunks_embedded: Mapped[int | None] = mapped_column(Integer, default=None)


class FileContent(Base):
    """The extracted text of a file and, until it is processed, the uploaded bytes."""

    __tablename__ = "file_contents"

    file_id: Mapped[str] = mapped_column(String, ForeignKey("files.id", ondelete="CASCADE"), primary_key=True)
    text: Mapped[str | None] = mapped_column(Text, default=None)
    raw: Mapped[bytes | None] = mapped_column(LargeBinary, default=None)


class FileAgent(OrgScopedMixin, Base):
    """A file as one agent sees it: open (with the visible window of lines) or closed."""

    __tablename__ = "files_agents"
    __table_args__ = (
        UniqueConstraint("agent_id", "file_id", name="uq_files_agents_agent_file"),
        UniqueConstraint("agent_id", "file_name", name="uq_files_agents_agent_name"),
    )

    id: Mapped[str] = mapped_column(String, primary_key=True)
    agent_id: Mapped[str] = mapped_column(String, ForeignKey("agents.id", ondelete="CASCADE"))
    file_id: Mapped[str] = mapped_column(String, ForeignKey("files.id", ondelete="CASCADE"), index=True)
    source_id: Mapped[str] = mapped_column(String, ForeignKey("sources.id", ondelete="CASCADE"), index=True)
    file_name: Mapped[str] = mapped_column(String)
    is_open: Mapped[bool] = mapped_column(Boolean, default=True)
    visible_content: Mapped[str | None] = mapped_column(Text, default=None)
    last_accessed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    start_line: Mapped[int | None] = mapped_column(Integer, default=None)
    end_line: Mapped[int | None] = mapped_column(Integer, default=None)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)
