"""SQL for runs and steps rows. Never commits; the loop owns its transactions."""

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import case, func, literal, select, update
from sqlalchemy.dialects.postgresql import JSONB, insert
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm

TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})


class RunRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def start_run(
        self,
        *,
        run_id: str,
        agent_id: str,
        organization_id: str,
        metadata: dict[str, Any] | None = None,
        request_config: dict[str, Any] | None = None,
        background: bool = False,
    ) -> str:
        """Create the run as running, or promote the caller's created row; one statement. Returns the status
        (``cancelled`` when a client cancelled it before the loop started)."""
        values = insert(orm.Run).values(
            id=run_id,
            agent_id=agent_id,
            organization_id=organization_id,
            status="running",
            metadata=metadata,
            request_config=request_config,
            background=background,
            num_steps=0,
        )
        stmt = values.on_conflict_do_update(
            index_elements=[orm.Run.id],
            set_={"status": case((orm.Run.status == "created", "running"), else_=orm.Run.status)},
        ).returning(orm.Run.status)
        return str(await self.session.scalar(stmt))

    async def status_of(self, run_id: str) -> str | None:
        status: str | None = await self.session.scalar(select(orm.Run.status).where(orm.Run.id == run_id))
        return status

    async def record_progress(self, run_id: str, *, num_steps: int, tools_used: list[str]) -> str | None:
        """Store the step count and tools used; returns the run's status (a client may have cancelled it)."""
        status: str | None = await self.session.scalar(
            update(orm.Run)
            .where(orm.Run.id == run_id)
            .values(num_steps=num_steps, tools_used=tools_used)
            .returning(orm.Run.status)
        )
        return status

    async def finish(
        self,
        run_id: str,
        *,
        status: str,
        stop_reason: str,
        num_steps: int,
        tools_used: list[str],
        duration_ns: int | None = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        """Close the run in one statement; a run already cancelled by a client stays cancelled."""
        was_cancelled = orm.Run.status == "cancelled"
        values: dict[str, Any] = {
            "status": case((was_cancelled, "cancelled"), else_=status),
            "stop_reason": case((was_cancelled, "cancelled"), else_=stop_reason),
            "completed_at": datetime.now(UTC),
            "num_steps": num_steps,
            "tools_used": tools_used,
            "total_duration_ns": duration_ns,
        }
        if error is not None:
            values["metadata_"] = func.coalesce(orm.Run.metadata_, literal({}, JSONB)).op("||")(
                literal({"error": error}, JSONB)
            )
        await self.session.execute(update(orm.Run).where(orm.Run.id == run_id).values(**values))

    async def merge_step(self, step: orm.Step) -> None:
        """Insert or update a step row built outside this session."""
        await self.session.merge(step)
