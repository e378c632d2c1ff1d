"""The INSERT of a step's provider trace (`loop.provider_trace`), a CTE of the step's own statement
(`runs.step_write`) or a statement of its own (`insert_trace`, for the steps written one statement at a time):
no round trip of its own on the common path. The request and response arrive as JSON text and are stored as
`json` (checked, not parsed into a tree); the agent's tags are read by the statement itself."""

from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import JSON, String, Table, bindparam, cast, func, insert, literal_column, select
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.dml import Insert

from memlet.db import models as orm
from memlet.db.driver import DriverSQL, driver_of

_TRACES: Table = orm.ProviderTrace.__table__  # type: ignore[assignment]
_TAGS: Table = orm.AgentTag.__table__  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class TraceWrite:
    """The values of one `provider_traces` row (the JSON documents as text: `request_json` as posted)."""

    id: str
    organization_id: str
    step_id: str
    agent_id: str
    run_id: str | None
    user_id: str | None
    call_type: str
    llm_config: dict[str, Any] | None
    request_json: str
    response_json: str


def _typed(name: str, column: str) -> Any:
    return bindparam(name, type_=_TRACES.c[column].type)


def trace_insert() -> Insert:
    """The INSERT, its parameters named `x_<column>` (`trace_params`)."""
    agent_id = _typed("x_agent_id", "agent_id")
    tags = func.coalesce(func.json_agg(aggregate_order_by(_TAGS.c.tag, _TAGS.c.tag)), literal_column("'[]'::json"))
    return insert(_TRACES).values(
        id=_typed("x_id", "id"),
        organization_id=_typed("x_organization_id", "organization_id"),
        step_id=_typed("x_step_id", "step_id"),
        agent_id=agent_id,
        run_id=_typed("x_run_id", "run_id"),
        user_id=_typed("x_user_id", "user_id"),
        call_type=_typed("x_call_type", "call_type"),
        agent_tags=select(tags).where(_TAGS.c.agent_id == agent_id).scalar_subquery(),
        llm_config=_typed("x_llm_config", "llm_config"),
        request_json=cast(bindparam("x_request_json", type_=String), JSON),
        response_json=cast(bindparam("x_response_json", type_=String), JSON),
        created_at=_typed("x_created_at", "created_at"),
    )


def trace_params(trace: TraceWrite, now: datetime) -> dict[str, Any]:
    return {
        "x_id": trace.id,
        "x_organization_id": trace.organization_id,
        "x_step_id": trace.step_id,
        "x_agent_id": trace.agent_id,
        "x_run_id": trace.run_id,
        "x_user_id": trace.user_id,
        "x_call_type": trace.call_type,
        "x_llm_config": trace.llm_config,
        "x_request_json": trace.request_json,
        "x_response_json": trace.response_json,
        "x_created_at": now,
    }


@lru_cache(maxsize=1)
def _alone() -> DriverSQL:
    return DriverSQL(trace_insert())


async def insert_trace(session: AsyncSession, trace: TraceWrite, now: datetime) -> None:
    """The trace in a statement of its own, in the caller's transaction (after its step row)."""
    driver = await driver_of(session)
    await driver.fetch(_alone(), trace_params(trace, now))
