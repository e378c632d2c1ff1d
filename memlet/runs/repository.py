"""SQL for runs and steps rows. Never commits; the loop owns its transactions."""

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm

TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})


class RunRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def ensure_run(
        self,
        *,
        run_id: str,
        agent_id: str,
        organization_id: str,
        metadata: dict[str, Any] | None = None,
        request_config: dict[str, Any] | None = None,
        background: bool = False,
    ) -> None:
        """Create the run row (status created) unless the caller already made it."""
        await self.session.execute(
            insert(orm.Run)
            .values(
                id=run_id,
                agent_id=agent_id,
                organization_id=organization_id,
                status="created",
                metadata=metadata,
                request_config=request_config,
                background=background,
                num_steps=0,
            )
            .on_conflict_do_nothing()
        )

    async def status_of(self, run_id: str) -> str | None:
        status: str | None = await self.session.scalar(select(orm.Run.status).where(orm.Run.id == run_id))
        return status

    async def mark_running(self, run_id: str) -> None:
        await self.session.execute(
            update(orm.Run).where(orm.Run.id == run_id, orm.Run.status == "created").values(status="running")
        )

    async def record_progress(self, run_id: str, *, num_steps: int, tools_used: list[str]) -> None:
        await self.session.execute(
            update(orm.Run).where(orm.Run.id == run_id).values(num_steps=num_steps, tools_used=tools_used)
        )

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
        """Close the run; a run already cancelled by a client stays cancelled."""
        run = await self.session.get(orm.Run, run_id, with_for_update=True)
        if run is None:
            return
        if run.status != "cancelled":
            run.status = status
        run.stop_reason = "cancelled" if run.status == "cancelled" else stop_reason
        run.completed_at = datetime.now(UTC)
        run.num_steps = num_steps
        run.tools_used = tools_used
        run.total_duration_ns = duration_ns
        if error is not None:
            run.metadata_ = {**(run.metadata_ or {}), "error": error}

    def add_step(self, step: orm.Step) -> None:
        self.session.add(step)

    async def merge_step(self, step: orm.Step) -> None:
        """Insert or update a step row built outside this session."""
        await self.session.merge(step)
