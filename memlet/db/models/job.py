from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, DateTime, ForeignKey, Index, Integer, String, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from memlet.db.base import Base, OrgScopedMixin, TimestampMixin


class Job(TimestampMixin, OrgScopedMixin, Base):
    """Background work that is not one agent turn: today only message batches (``job_type`` ``batch``).

    A batch's requests each run as an ordinary run of the agent loop; ``batch_items`` links the job to them.
    """

    __tablename__ = "jobs"
    __table_args__ = (Index("ix_jobs_org_type_created", "organization_id", "job_type", "created_at"),)

    id: Mapped[str] = mapped_column(String, primary_key=True)
    job_type: Mapped[str] = mapped_column(String, default="job")
    status: Mapped[str] = mapped_column(String, default="created")
    stop_reason: Mapped[str | None] = mapped_column(String, default=None)
    completed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    metadata_: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSONB, default=None)
    background: Mapped[bool | None] = mapped_column(Boolean, default=None)
    agent_id: Mapped[str | None] = mapped_column(String, default=None)
    callback_url: Mapped[str | None] = mapped_column(Text, default=None)
    callback_sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    callback_status_code: Mapped[int | None] = mapped_column(Integer, default=None)
    callback_error: Mapped[str | None] = mapped_column(Text, default=None)
    ttft_ns: Mapped[int | None] = mapped_column(BigInteger, default=None)
    total_duration_ns: Mapped[int | None] = mapped_column(BigInteger, default=None)


class BatchItem(Base):
    """One request of a batch job: the run that carries it out, for which agent, at which position."""

    __tablename__ = "batch_items"

    job_id: Mapped[str] = mapped_column(String, ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[str] = mapped_column(String, ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    agent_id: Mapped[str] = mapped_column(String, ForeignKey("agents.id", ondelete="CASCADE"))
    # The request as sent (a LettaRequest), so the driver can start it later.
    request: Mapped[dict[str, Any]] = mapped_column(JSONB)
