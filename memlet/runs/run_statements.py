"""The runs table's statements every turn runs (start, progress, close, the status check), built once with bind
parameters and run on the driver connection (`memlet.db.driver`); and how a run's end is written."""

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Float, Select, Table, bindparam, case, func, literal, select, update
from sqlalchemy.dialects.postgresql import JSON, aggregate_order_by, insert
from sqlalchemy.sql.elements import BindParameter, ColumnElement

from memlet.db import models as orm
from memlet.db.driver import DriverSQL

# The table itself: Core statements skip the ORM's bulk-update layer and its identity-map synchronisation, which
# these short sessions never need.
RUNS: Table = orm.Run.__table__  # type: ignore[assignment]


@dataclass(frozen=True)
class RunEnd:
    """How a run ends: its status and stop reason (unless a client cancelled it first), how long it took, and
    the error that ended it (the run's ``metadata.error``: an error message, or a blocking run's error text)."""

    status: str
    stop_reason: str
    duration_ns: int | None = None
    error: dict[str, Any] | str | None = None


def merged_metadata(values: dict[str, Any]) -> ColumnElement[Any]:
    """The run's metadata with `values` merged in, in the statement that writes it: Python's ``{**old, **values}``
    (a key it had keeps its place, new keys come last), as Letta merges a run's metadata. The column is `json`,
    which has no ``||``: the object is rebuilt from its pairs in order."""
    stored = RUNS.c.metadata
    current = case((func.json_typeof(stored) == "object", stored), else_=literal({}, JSON))
    old = func.json_each(current).table_valued("key", "value", with_ordinality="o").render_derived(name="old")
    new = (
        func.json_each(literal(values, JSON))
        .table_valued("key", "value", with_ordinality="o")
        .render_derived(name="new")
    )
    key = func.coalesce(old.c.key, new.c.key)
    value = case((new.c.key.is_(None), old.c.value), else_=new.c.value)
    position = func.coalesce(old.c.o, new.c.o + 1_000_000_000)
    pairs = old.join(new, old.c.key == new.c.key, full=True)
    return select(func.json_object_agg(key, aggregate_order_by(value, position))).select_from(pairs).scalar_subquery()


def closing_values(end: RunEnd) -> dict[str, Any]:
    """The columns that close a run; a run already cancelled by a client stays cancelled."""
    was_cancelled = RUNS.c.status == "cancelled"
    values: dict[str, Any] = {
        "status": case((was_cancelled, "cancelled"), else_=end.status),
        "stop_reason": case((was_cancelled, "cancelled"), else_=end.stop_reason),
        "completed_at": datetime.now(UTC),
        "total_duration_ns": end.duration_ns,
    }
    if end.error is not None:
        values["metadata"] = merged_metadata({"error": end.error})
    return values


def _prebuilt_progress(*, closing: bool) -> Any:
    """The step commit's UPDATE of its run (with `closing`, also the run's end as `closing_values`
    writes it, without an error)."""
    values: dict[str, Any] = {
        "num_steps": bindparam("p_num_steps", type_=RUNS.c.num_steps.type),
        "tools_used": bindparam("p_tools_used", type_=RUNS.c.tools_used.type),
    }
    if closing:
        was_cancelled = RUNS.c.status == "cancelled"
        end_status = bindparam("p_status", type_=RUNS.c.status.type)
        end_stop = bindparam("p_stop_reason", type_=RUNS.c.stop_reason.type)
        values.update(
            status=case((was_cancelled, "cancelled"), else_=end_status),
            stop_reason=case((was_cancelled, "cancelled"), else_=end_stop),
            completed_at=bindparam("p_completed_at", type_=RUNS.c.completed_at.type),
            total_duration_ns=bindparam("p_duration_ns", type_=RUNS.c.total_duration_ns.type),
        )
    return update(RUNS).where(RUNS.c.id == bindparam("p_run_id")).values(**values).returning(RUNS.c.status)


RECORD_PROGRESS = DriverSQL(_prebuilt_progress(closing=False))
RECORD_PROGRESS_AND_CLOSE = DriverSQL(_prebuilt_progress(closing=True))


def lease_deadline(lease_s: float | BindParameter[Any]) -> Any:
    """``now() + lease_s`` on the database's clock (workers' clocks may differ)."""
    return func.now() + func.make_interval(0, 0, 0, 0, 0, 0, lease_s)


def _prebuilt_start(*, leased: bool) -> Any:
    """A run's start as an INSERT ... ON CONFLICT (with `leased`, the worker's lease too); `StartingReads` builds
    each of its statements once."""
    lease: dict[str, Any] = {}
    if leased:
        lease = {
            "worker_id": bindparam("p_worker_id", type_=RUNS.c.worker_id.type),
            "lease_expires_at": lease_deadline(bindparam("p_lease_s", type_=Float)),
        }
    columns = ("id", "agent_id", "organization_id", "metadata", "request_config", "background", "conversation_id")
    values = insert(RUNS).values(
        status="running",
        num_steps=0,
        **{column: bindparam(f"p_{column}", type_=RUNS.c[column].type) for column in columns},
        **lease,
    )
    return values.on_conflict_do_update(
        index_elements=[RUNS.c.id],
        set_={"status": case((RUNS.c.status == "created", "running"), else_=RUNS.c.status), **lease},
    ).returning(RUNS.c.status)


@dataclass(frozen=True)
class RunStart:
    """A run's start (`RunRepository.read_and_start`): the row inserted as running, or the caller's created row
    promoted; with a `worker_id`, leased to that worker for `lease_s`."""

    run_id: str
    agent_id: str
    organization_id: str
    metadata: dict[str, Any] | None = None
    request_config: dict[str, Any] | None = None
    background: bool = False
    worker_id: str | None = None
    lease_s: float = 30.0
    conversation_id: str | None = None

    def params(self) -> dict[str, Any]:
        """The bind parameters of the start's INSERT (`StartingReads`)."""
        params: dict[str, Any] = {
            "p_id": self.run_id,
            "p_agent_id": self.agent_id,
            "p_organization_id": self.organization_id,
            "p_metadata": self.metadata,
            "p_request_config": self.request_config,
            "p_background": self.background,
            "p_conversation_id": self.conversation_id,
        }
        if self.worker_id is not None:
            params |= {"p_worker_id": self.worker_id, "p_lease_s": self.lease_s}
        return params


class StartingReads:
    """Read statements that also start a run: the run's INSERT ... ON CONFLICT (`_prebuilt_start`) as a
    data-modifying CTE (it runs whether or not the read finds a row), the run's status as the read's last column.
    Built once per read (a module-level select) and lease mode."""

    def __init__(self) -> None:
        self._built: dict[tuple[Select[Any], bool], DriverSQL] = {}

    def of(self, read: Select[Any], start: RunStart) -> DriverSQL:
        key = (read, start.worker_id is not None)
        statement = self._built.get(key)
        if statement is None:
            started = _prebuilt_start(leased=key[1]).cte("started")
            read_started = read.add_columns(select(started.c.status).scalar_subquery()).add_cte(started)
            statement = self._built[key] = DriverSQL(read_started)
        return statement


STARTING_READS = StartingReads()
# A run's status, by id (a turn's check for a cancel between its steps).
STATUS_OF = DriverSQL(select(RUNS.c.status).where(RUNS.c.id == bindparam("p_run_id")))
