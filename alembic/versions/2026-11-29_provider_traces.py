"""Provider traces: the raw request and response of every agent-step LLM call, per step, as Letta 0.16.8 stores
them by default (`GET /v1/steps/{id}/trace`, `GET /v1/telemetry/{id}`). `json` columns: the request is kept as
the bytes memlet posted. A trace goes with its step.

Revision ID: 2026_11_29_provider_traces
Revises: 2026_11_29_run_cancelled_ns
Create Date: 2026-11-29 19:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSON

from alembic import op

revision: str = "2026_11_29_provider_traces"
down_revision: str | None = "2026_11_29_run_cancelled_ns"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "provider_traces",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("organization_id", sa.String(), nullable=False),
        sa.Column("step_id", sa.String(), sa.ForeignKey("steps.id", ondelete="CASCADE"), nullable=False),
        sa.Column("agent_id", sa.String(), nullable=True),
        sa.Column("run_id", sa.String(), nullable=True),
        sa.Column("user_id", sa.String(), nullable=True),
        sa.Column("call_type", sa.String(), nullable=True),
        sa.Column("agent_tags", JSON(), nullable=True),
        sa.Column("llm_config", JSON(), nullable=True),
        sa.Column("request_json", JSON(), nullable=False),
        sa.Column("response_json", JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
    )
    op.create_index("ix_provider_traces_step_id", "provider_traces", ["step_id"])


def downgrade() -> None:
    op.drop_table("provider_traces")
