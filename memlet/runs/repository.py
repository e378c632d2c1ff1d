"""SQL for the runs table: the loop's writes and the routes' reads. Never commits; callers own the transactions."""

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    ARRAY,
    ColumnElement,
    Select,
    String,
    and_,
    any_,
    bindparam,
    case,
    delete,
    func,
    literal,
    literal_column,
    or_,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import JSONB, insert
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm
from memlet.db.base import utcnow
from memlet.db.driver import Driver, DriverSQL, driver_of, orm_insert_values
from memlet.db.pagination import Page, fetch_page
from memlet.db.sql import any_of
from memlet.errors import NotFoundError
from memlet.runs.filters import RunFilters as RunFilters  # re-exported: its callers import it from here
from memlet.runs.run_statements import (
    RECORD_PROGRESS,
    RECORD_PROGRESS_AND_CLOSE,
    RUNS,
    STARTING_READS,
    STATUS_OF,
    RunEnd,
    RunStart,
    closing_values,
    lease_deadline,
    merged_metadata,
)
from memlet.runs.schemas import ACTIVE_STATUSES

# (attribute, column) of every column of a run, for the INSERT of `add_for_agent`.
_RUN_COLUMNS = tuple((attr.key, attr.columns[0]) for attr in orm.Run.__mapper__.column_attrs)

TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})


ACTIVE_RUN_STATUSES = ("created", "running")


class RunRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def get_or_404(self, org_id: str, run_id: str) -> orm.Run:
        """The row, or the 404 Letta answers for an unknown or foreign id."""
        row = await self.find(org_id, run_id)
        if row is None:
            raise NotFoundError("Run", message=f"Run with id {run_id} not found")
        return row

    async def find(self, org_id: str, run_id: str) -> orm.Run | None:
        return await self.session.scalar(select(orm.Run).where(orm.Run.id == run_id, orm.Run.organization_id == org_id))

    async def by_ids(self, org_id: str, run_ids: Sequence[str]) -> list[orm.Run]:
        rows = await self.session.scalars(
            select(orm.Run).where(orm.Run.id.in_(list(run_ids)), orm.Run.organization_id == org_id)
        )
        return list(rows)

    async def list_runs(
        self, org_id: str, filters: RunFilters, page: Page, *, order_by: str = "created_at"
    ) -> list[orm.Run]:
        """A page of runs by creation time, or (``order_by="duration"``) by total duration."""
        r = orm.Run
        by_duration = order_by == "duration"
        stmt = filters.apply(select(r), org_id, by_duration=by_duration)
        sort_col = r.total_duration_ns if by_duration else r.created_at
        return await fetch_page(self.session, stmt, page, sort_col=sort_col, id_col=r.id)

    async def active_in_thread(self, agent_id: str, conversation_id: str | None, *, limit: int = 100) -> list[str]:
        """Ids of the created/running runs of one thread, newest first: a conversation's, or (None) the agent's own
        thread (runs outside any conversation)."""
        return list(await self.session.scalars(active_in_thread_query(agent_id, conversation_id, limit)))

    async def add(self, run: orm.Run) -> None:
        """Insert a new run row (the send paths create every run through here)."""
        self.session.add(run)
        await self.session.flush()

    @staticmethod
    def insert_for_agent(agent: Select[Any]) -> DriverSQL:
        """The statement of `add_for_agent` for `agent` (a select of at most one row about the run's agent, with
        bind parameters): built once by its caller. Every column of a run is a parameter."""
        found = agent.cte("agent")
        row = select(*(bindparam(f"v_{column.key}", type_=column.type) for _, column in _RUN_COLUMNS))
        written = insert(RUNS).from_select([column.key for _, column in _RUN_COLUMNS], row.select_from(found))
        return DriverSQL(select(found).add_cte(written.cte("written")))

    @staticmethod
    async def add_for_agent(
        driver: Driver, run: orm.Run, statement: DriverSQL, agent_params: dict[str, Any]
    ) -> tuple[Any, ...] | None:
        """Insert `run` in the statement that reads its agent (`insert_for_agent`, with `agent_params`): the run is
        written only when that row exists. Returns the row, or None (nothing written). One statement, where a check
        of the agent and then the INSERT took two and a transaction; atomic by itself, so it runs with no
        transaction (`memlet.db.driver.lone_statements`). Columns not set on `run` get their defaults, as the ORM
        gives them."""
        run.created_at = run.created_at or utcnow()
        run.updated_at = run.updated_at or run.created_at
        values = orm_insert_values(run, _RUN_COLUMNS)
        params = {f"v_{column}": value for column, value in values.items()} | agent_params
        found_row = await driver.fetchrow(statement, params)
        return tuple(found_row) if found_row is not None else None

    async def delete(self, run_id: str) -> None:
        await self.session.execute(delete(orm.Run).where(orm.Run.id == run_id))

    async def mark_failed(self, run_id: str, error: Any, stop_reason: str | None = None) -> bool:
        """Close a run that failed before the loop took it over (the loop closes the others itself); False when
        it was already closed. `error` is its ``metadata.error``."""
        run = await self.session.get(orm.Run, run_id, with_for_update=True)
        if run is None or run.status in ("completed", "failed", "cancelled"):
            return False
        run.status = "failed"
        run.stop_reason = stop_reason
        run.completed_at = datetime.now(UTC)
        run.metadata_ = {**(run.metadata_ or {}), "error": error}
        return True

    async def read_and_start(self, read: Select[Any], params: Mapping[str, Any], start: RunStart) -> tuple[Any, str]:
        """`read`'s first row (None when it finds none) and the run's status after `start`'s write (inserted as
        running, or the caller's created row promoted; ``cancelled`` when a client cancelled it before the loop
        started), in one statement (`StartingReads`): a turn's load that starts its run."""
        driver = await driver_of(self.session)
        row = await driver.fetchrow(STARTING_READS.of(read, start), {**params, **start.params()})
        return (None, "") if row is None else (row, str(row[-1]))

    async def cancelled_among(self, run_ids: Sequence[str]) -> list[str]:
        """Which of `run_ids` are cancelled (one statement for every run a process is watching)."""
        # `= ANY(array)`: one prepared statement however many runs are in flight.
        in_flight = any_(literal(list(run_ids), ARRAY(String)))
        rows = await self.session.scalars(
            select(orm.Run.id).where(orm.Run.id == in_flight, orm.Run.status == "cancelled")
        )
        return list(rows)

    async def statuses_of(self, run_ids: Sequence[str]) -> dict[str, str]:
        """The status of each of `run_ids` that exists (one statement for every run a process follows)."""
        rows = await self.session.execute(select(orm.Run.id, orm.Run.status).where(orm.Run.id == any_of(run_ids)))
        return {run_id: status for run_id, status in rows}

    async def status_of(self, run_id: str) -> str | None:
        return await self.status_via(await driver_of(self.session), run_id)

    @staticmethod
    async def status_via(driver: Driver, run_id: str) -> str | None:
        """The run's status, read through `driver` (a turn's locked connection, with no transaction open)."""
        status: str | None = await driver.fetchval(STATUS_OF, {"p_run_id": run_id})
        return status

    async def record_progress(
        self, run_id: str, *, num_steps: int, tools_used: list[str], end: RunEnd | None = None
    ) -> str | None:
        """Store the step count and tools used, and with `end` close the run in the same statement (a turn's last
        step); returns the run's status (a client may have cancelled it: a cancelled run stays cancelled)."""
        params: dict[str, Any] = {"p_run_id": run_id, "p_num_steps": num_steps, "p_tools_used": tools_used}
        stmt = RECORD_PROGRESS
        if end is not None and end.error is not None:  # rare: the error merges into the metadata
            values = {"num_steps": num_steps, "tools_used": tools_used, **closing_values(end)}
            closing = update(RUNS).where(RUNS.c.id == run_id).values(**values).returning(RUNS.c.status)
            conn = await self.session.connection()
            return await conn.scalar(closing)
        if end is not None:
            stmt = RECORD_PROGRESS_AND_CLOSE
            params.update(
                p_status=end.status,
                p_stop_reason=end.stop_reason,
                p_completed_at=datetime.now(UTC),
                p_duration_ns=end.duration_ns,
            )
        driver = await driver_of(self.session)
        status: str | None = await driver.fetchval(stmt, params)
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
        error: dict[str, Any] | str | None = None,
    ) -> None:
        """Close the run in one statement; a run already cancelled by a client stays cancelled."""
        end = RunEnd(status=status, stop_reason=stop_reason, duration_ns=duration_ns, error=error)
        values = {"num_steps": num_steps, "tools_used": tools_used, **closing_values(end)}
        await self.session.execute(update(RUNS).where(RUNS.c.id == run_id).values(**values))

    async def add_metadata(self, run_id: str, values: dict[str, Any]) -> None:
        """Merge `values` into the run's metadata (one statement)."""
        await self.session.execute(update(RUNS).where(RUNS.c.id == run_id).values(metadata=merged_metadata(values)))

    async def renew_leases(self, worker_id: str, run_ids: Sequence[str], lease_s: float) -> None:
        """Extend the leases of a worker's in-flight runs (one statement)."""
        await self.session.execute(
            update(orm.Run)
            .where(orm.Run.id.in_(list(run_ids)), orm.Run.status.in_(ACTIVE_RUN_STATUSES))
            .values(worker_id=worker_id, lease_expires_at=lease_deadline(lease_s))
        )

    async def active_owners(self, *, other_than: str) -> list[str]:
        """The workers, other than `other_than`, that own active runs."""
        owners = await self.session.scalars(
            select(orm.Run.worker_id)
            .where(
                orm.Run.status.in_(ACTIVE_RUN_STATUSES),
                orm.Run.worker_id.is_not(None),
                orm.Run.worker_id != other_than,
            )
            .distinct()
        )
        return [str(owner) for owner in owners]

    async def orphan_ids(self, dead_workers: Sequence[str], lease_s: float, keep: Sequence[str]) -> list[str]:
        """Active runs whose lease expired, whose worker is dead, or that have no worker and are older than a lease."""
        r = orm.Run
        orphaned = or_(
            r.lease_expires_at < func.now(),
            r.worker_id.in_(list(dead_workers)),
            and_(r.worker_id.is_(None), r.created_at < func.now() - func.make_interval(0, 0, 0, 0, 0, 0, lease_s)),
        )
        # A queued run has no worker by design: nobody started it, so it waits for a worker to claim it.
        queued = select(orm.QueuedRun.run_id)
        stmt = select(r.id).where(r.status.in_(ACTIVE_RUN_STATUSES), orphaned, r.id.not_in(queued))
        if keep:
            stmt = stmt.where(r.id.not_in(list(keep)))
        return list(await self.session.scalars(stmt))

    async def close_interrupted(self, run_id: str, error: dict[str, Any]) -> orm.Run | None:
        """Close a still-active run as failed (stop reason ``error``); None when it already ended or is locked."""
        run = await self.session.scalar(
            select(orm.Run)
            .where(orm.Run.id == run_id, orm.Run.status.in_(ACTIVE_RUN_STATUSES))
            .with_for_update(skip_locked=True)
        )
        if run is None:
            return None
        run.status, run.stop_reason = "failed", "error"
        run.completed_at = datetime.now(UTC)
        run.lease_expires_at = None
        run.metadata_ = {**(run.metadata_ or {}), "error": error}
        return run

    async def by_request(self, org_id: str, agent_id: str, token: str, since: datetime) -> str | None:
        """The id of the newest run of the agent started by a request with this token (a client's retry), since
        `since`."""
        found: str | None = await self.session.scalar(by_request_query(org_id, agent_id, token, since))
        return found

    async def by_otid(
        self, org_id: str, otid: str, since: datetime, *, agent_id: str | None, conversation_id: str | None
    ) -> orm.Run | None:
        """The newest run whose request carried `otid` (or whose request token is `otid`), since `since`."""
        r = orm.Run
        stmt = select(r).where(
            r.organization_id == org_id,
            r.created_at >= since,
            or_(r.request_token == otid, r.otids.contains(literal([otid], JSONB))),
        )
        stmt = _scoped(stmt, agent_id, conversation_id)
        return await self.session.scalar(stmt.order_by(r.created_at.desc()).limit(1))

    async def newest_active(self, org_id: str, *, agent_id: str | None, conversation_id: str | None) -> orm.Run | None:
        """The newest created/running run of an agent or a conversation."""
        r = orm.Run
        stmt = select(r).where(r.organization_id == org_id, r.status.in_(ACTIVE_STATUSES))
        stmt = _scoped(stmt, agent_id, conversation_id)
        return await self.session.scalar(stmt.order_by(r.created_at.desc()).limit(1))

    async def lock_holder(self, agent_id: str, exclude: str | None = None) -> str | None:
        """The active run that most likely holds the agent's lock: a running one first, then the oldest created."""
        r = orm.Run
        stmt = select(r.id).where(r.agent_id == agent_id, r.status.in_(ACTIVE_STATUSES))
        if exclude is not None:
            stmt = stmt.where(r.id != exclude)
        stmt = stmt.order_by(case((r.status == "running", 0), else_=1), r.created_at).limit(1)
        holder: str | None = await self.session.scalar(stmt)
        if holder is None:  # it ended between the refused lock and this lookup: name the run that just finished
            recent = select(r.id).where(r.agent_id == agent_id, r.completed_at.is_not(None))
            if exclude is not None:
                recent = recent.where(r.id != exclude)
            holder = await self.session.scalar(recent.order_by(r.completed_at.desc()).limit(1))
        return holder

    async def forget_request(self, run_id: str) -> None:
        """Drop a run's request token and otids (a request refused before its turn started)."""
        await self.session.execute(update(orm.Run).where(orm.Run.id == run_id).values(request_token=None, otids=None))


def _scoped(stmt: Any, agent_id: str | None, conversation_id: str | None) -> Any:
    """Runs of a conversation, or every run of the agent when only the agent is given (Letta's default mode)."""
    if conversation_id is not None:
        return stmt.where(orm.Run.conversation_id == conversation_id)
    if agent_id is not None:
        return stmt.where(orm.Run.agent_id == agent_id, orm.Run.conversation_id.is_(None))
    return stmt


# Created or running, as SQL constants (the partial indexes' own predicate; a driver statement takes no expanding
# IN parameter).
_ACTIVE = orm.Run.status.in_([literal_column(f"'{status}'") for status in ACTIVE_STATUSES])


def active_in_thread_query(
    agent_id: str | ColumnElement[str], conversation_id: str | ColumnElement[str] | None, limit: int
) -> Select[Any]:
    """The ids of a thread's created/running runs, newest first (`RunRepository.active_in_thread`). The ids may be
    columns of an outer query (a correlated subquery)."""
    thread = (
        orm.Run.conversation_id == conversation_id if conversation_id is not None else orm.Run.conversation_id.is_(None)
    )
    return (
        select(orm.Run.id)
        .where(orm.Run.agent_id == agent_id, thread, _ACTIVE)
        .order_by(orm.Run.created_at.desc())
        .limit(limit)
    )


def by_request_query(
    org_id: str | ColumnElement[str],
    agent_id: str | ColumnElement[str],
    token: str | ColumnElement[str] | None,
    since: datetime | ColumnElement[datetime],
) -> Select[Any]:
    """The id of the newest run of the agent a request with this retry token started since `since`
    (`RunRepository.by_request`); the values may be bind parameters or an outer query's columns."""
    r = orm.Run
    return (
        select(r.id)
        .where(r.organization_id == org_id, r.agent_id == agent_id, r.request_token == token, r.created_at >= since)
        .order_by(r.created_at.desc())
        .limit(1)
    )
