"""Reading a step's provider trace back (`GET /v1/steps/{id}/trace`, `GET /v1/telemetry/{id}`)."""

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.actor import Actor
from memlet.db import models as orm


async def trace_of_step(session: AsyncSession, actor: Actor, step_id: str) -> dict[str, Any] | None:
    """The step's trace in Letta's `ProviderTrace` shape, or None: none in the actor's organization, or more than
    one (Letta reads the step's trace as exactly one row and answers null when the read fails)."""
    query = (
        select(orm.ProviderTrace)
        .where(orm.ProviderTrace.step_id == step_id, orm.ProviderTrace.organization_id == actor.organization_id)
        .limit(2)
    )
    rows = (await session.scalars(query)).all()
    if len(rows) != 1:
        return None
    row = rows[0]
    return {
        "created_by_id": row.user_id,
        "last_updated_by_id": row.user_id,
        "created_at": row.created_at,
        "updated_at": row.created_at,
        "id": row.id,
        "request_json": row.request_json,
        "response_json": row.response_json,
        "step_id": row.step_id,
        "agent_id": row.agent_id,
        "agent_tags": row.agent_tags,
        "call_type": row.call_type,
        "run_id": row.run_id,
        "source": None,
        "org_id": row.organization_id,
        "user_id": row.user_id,
        "compaction_settings": None,
        "llm_config": row.llm_config,
        "billing_context": None,
    }
