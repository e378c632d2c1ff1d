"""Runs waiting for a worker to start them (sleeptime runs): durable, so they survive a restart.

A queued run has its `runs` row (status ``created``, no worker) and one row here. A worker claims it by deleting
this row and leasing the run in one transaction, so exactly one worker starts it, once. The orphan sweep leaves
queued runs alone: nobody has started them, so nothing of them is lost. `agent_id` is unique: an agent has at
most one queued run, and later work for it joins that run (coalescing) instead of queueing another.
"""

from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, ForeignKey, String, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from memlet.db.base import Base


class QueuedRun(Base):
    __tablename__ = "queued_runs"

    run_id: Mapped[str] = mapped_column(String, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    agent_id: Mapped[str] = mapped_column(String, ForeignKey("agents.id", ondelete="CASCADE"), unique=True)
    organization_id: Mapped[str] = mapped_column(String)
    created_by_id: Mapped[str | None] = mapped_column(String, default=None)
    kind: Mapped[str] = mapped_column(String)
    # What the run will work on, read when it starts (a sleeptime run: its group and the last message to review).
    payload: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=text("now()"))
