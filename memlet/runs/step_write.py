"""A step's common commit in one statement: the step row, its messages, the append of their ids to the thread's
window (the agent's `message_ids`, or a conversation's with its history links), the agent's last stop reason when
the turn ends, and the run's progress (with its end when the turn ends).

These are the writes `StepRepository.insert`, `MessageRepository.add`, `AgentRepository.append_message_ids` (or
`ConversationRepository.append_message_ids` and `AgentRepository.set_last_stop_reason`) and
`RunRepository.record_progress` make one statement each, sent as data-modifying CTEs of one statement: one round
trip instead of four to six. The agent's xact lock is held by the caller's transaction (`lock_for_commit`), as for
the separate statements, or taken by the statement itself when it commits alone (`write_step`'s `lock_key`). Postgres runs every CTE of the statement whether or not the final SELECT reads it, on
one snapshot; the messages' statement-level count triggers and the foreign key checks run at the end of the
statement, once the step row, the messages and the links are all written. The only SQL here that spans tables:
the loop's hottest write.

Used for up to `MAX_ROWS` messages and without a run error (`loop/step_writes.py` keeps the separate statements
for the rest). After a memory edit the same statement also rewrites the system messages (the agent's, and in a
conversation the conversation's own) and the agent's `system_compiled_at` (`SystemWrite`: the caller compiled the
texts in the transaction, after writing the blocks; or, for a memory edit committed without a transaction, the
statement writes the edited block values too and the prompt only if it is still the one the caller compiled
against, `SystemWrite.expected`).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import ARRAY, BigInteger, String, Table, bindparam, case, func, insert, literal_column, select, update
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm
from memlet.db.base import utcnow
from memlet.db.driver import Driver, DriverSQL, driver_of, orm_insert_values
from memlet.db.sql import array_rows
from memlet.runs.run_statements import RunEnd
from memlet.runs.trace_write import TraceWrite, trace_insert, trace_params

MAX_ROWS = 8

_MESSAGES: Table = orm.Message.__table__  # type: ignore[assignment]
_STEPS: Table = orm.Step.__table__  # type: ignore[assignment]
_AGENTS: Table = orm.Agent.__table__  # type: ignore[assignment]
_RUNS: Table = orm.Run.__table__  # type: ignore[assignment]
_CONVERSATIONS: Table = orm.Conversation.__table__  # type: ignore[assignment]
_LINKS: Table = orm.ConversationMessage.__table__  # type: ignore[assignment]
_BLOCKS: Table = orm.Block.__table__  # type: ignore[assignment]
_MESSAGE_COLUMNS = tuple(
    (attr.key, attr.columns[0].key) for attr in orm.Message.__mapper__.column_attrs if attr.key != "sequence_id"
)
_STEP_COLUMNS = tuple((attr.key, attr.columns[0]) for attr in orm.Step.__mapper__.column_attrs)


@dataclass(frozen=True)
class SystemWrite:
    """Recompiled system messages, `(message id, new text)` (the agent's, and in a conversation the
    conversation's own too), and the agent's new recompile time.

    `expected`: the content the caller compiled against (one text only). The text is then written only if the
    stored content is still that (a compare-and-set; `StepWritten.system_written` says whether it was), and
    `blocks`, `(block id, new value)`, are written in the same statement with the same `updated_at`: a memory
    edit compiled outside any transaction (`loop/edit_write.py`)."""

    texts: tuple[tuple[str, str], ...]
    compiled_at: datetime
    expected: list[dict[str, Any]] | None = None
    blocks: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class StepWritten:
    """What the statement read back: the thread's whole window (the agent's or the conversation's `message_ids`) and
    the run's status (None: no such run)."""

    message_ids: list[str]
    run_status: str | None
    system_written: bool = True


def _typed(name: str, table: Table, column: str) -> Any:
    return bindparam(name, type_=table.c[column].type)


@lru_cache(maxsize=16 * 4 * MAX_ROWS)
def _statement(
    rows: int,
    with_step: bool,
    last_stop: bool,
    closing: bool,
    conversation: bool,
    system: bool = False,
    locking: bool = False,
    checked: bool = False,
    traced: bool = False,
) -> DriverSQL:
    written = (
        insert(_MESSAGES)
        .values([{c: _typed(f"m{i}_{c}", _MESSAGES, c) for _, c in _MESSAGE_COLUMNS} for i in range(rows)])
        .returning(_MESSAGES.c.id, _MESSAGES.c.sequence_id)
        .cte("written")
    )
    new_ids = bindparam("a_new_ids", type_=ARRAY(String))
    side: list[Any] = []  # CTEs the final SELECT does not read
    if conversation:
        thread = _CONVERSATIONS
        thread_id = bindparam("c_conversation_id", type_=String)
        links = select(thread_id, func.unnest(new_ids))
        side.append(
            pg_insert(_LINKS)
            .from_select(["conversation_id", "message_id"], links)
            .on_conflict_do_nothing()
            .cte("linked")
        )
        agent_values: dict[str, Any] = {}
        agent_where: list[Any] = []
        if last_stop:  # as `AgentRepository.set_last_stop_reason`
            stop = _typed("a_stop_reason", _AGENTS, "last_stop_reason")
            agent_values["last_stop_reason"] = stop
            if not system:
                agent_where.append(_AGENTS.c.last_stop_reason.is_distinct_from(stop))
        if system:
            agent_values["system_compiled_at"] = _typed("y_compiled_at", _AGENTS, "system_compiled_at")
        if agent_values:  # one UPDATE of the agent row: a statement may modify a row only once
            side.append(
                update(_AGENTS)
                .where(_AGENTS.c.id == bindparam("a_agent_id"), *agent_where)
                .values(**agent_values, updated_at=_typed("a_updated_at", _AGENTS, "updated_at"))
                .cte("stopped")
            )
        thread_values: dict[str, Any] = {}
    else:
        thread, thread_id = _AGENTS, bindparam("a_agent_id")
        thread_values = {}
        if last_stop:
            thread_values["last_stop_reason"] = _typed("a_stop_reason", _AGENTS, "last_stop_reason")
        if system:  # as `refresh_system_message` and the agent's flush after it
            thread_values["system_compiled_at"] = _typed("y_compiled_at", _AGENTS, "system_compiled_at")
    # The agent's xact lock when the statement commits by itself (see `write_step`'s `lock_key`): in the filter of
    # each UPDATE of a row a lock holder may rewrite, so it is held before that UPDATE reads its row.
    lock_filter: list[Any] = []
    if locking:
        locked = func.pg_advisory_xact_lock(bindparam("l_key", type_=BigInteger))
        lock_filter.append(select(literal_column("1")).select_from(locked).scalar_subquery() == 1)
    recompiled = None
    if system:  # as `MessageRepository.set_system_texts`
        texts = array_rows(
            "system_texts",
            message_id=bindparam("y_message_ids", type_=ARRAY(String)),
            text=bindparam("y_texts", type_=ARRAY(String)),
        )
        system_where = [_MESSAGES.c.id == texts.c.message_id, _MESSAGES.c.agent_id == bindparam("a_agent_id")]
        if checked:  # compare-and-set: nobody rewrote the prompt since the caller read it
            system_where += [_MESSAGES.c.content == _typed("y_expected", _MESSAGES, "content"), *lock_filter]
        recompiled = (
            update(_MESSAGES)
            .where(*system_where)
            .values(
                content=func.jsonb_build_array(func.jsonb_build_object("type", "text", "text", texts.c.text)),
                updated_at=_typed("y_updated_at", _MESSAGES, "updated_at"),
            )
            .returning(_MESSAGES.c.id)
            .cte("recompiled")
        )
        side.append(recompiled)
    if checked:  # the edited blocks' values, as `BlockRepository.save_for_agent` without a rename
        values = array_rows(
            "block_values",
            block_id=bindparam("b_ids", type_=ARRAY(String)),
            value=bindparam("b_values", type_=ARRAY(String)),
        )
        side.append(
            update(_BLOCKS)
            .where(_BLOCKS.c.id == values.c.block_id, *lock_filter)
            .values(value=values.c.value, updated_at=_typed("y_updated_at", _MESSAGES, "updated_at"))
            .cte("edited")
        )
    thread_where: list[Any] = [thread.c.id == thread_id, *lock_filter]
    appended = (
        update(thread)
        .where(*thread_where)
        .values(
            message_ids=thread.c.message_ids.op("||")(new_ids),
            updated_at=_typed("t_updated_at", thread, "updated_at"),
            **thread_values,
        )
        .returning(thread.c.message_ids)
        .cte("appended")
    )
    run_values: dict[str, Any] = {
        "num_steps": _typed("r_num_steps", _RUNS, "num_steps"),
        "tools_used": _typed("r_tools_used", _RUNS, "tools_used"),
        "updated_at": _typed("r_updated_at", _RUNS, "updated_at"),
    }
    if closing:  # as `run_statements.closing_values`: a run a client cancelled stays cancelled
        was_cancelled = _RUNS.c.status == "cancelled"
        run_values.update(
            status=case((was_cancelled, "cancelled"), else_=_typed("r_status", _RUNS, "status")),
            stop_reason=case((was_cancelled, "cancelled"), else_=_typed("r_stop_reason", _RUNS, "stop_reason")),
            completed_at=_typed("r_completed_at", _RUNS, "completed_at"),
            total_duration_ns=_typed("r_duration_ns", _RUNS, "total_duration_ns"),
        )
    progressed = (
        update(_RUNS)
        .where(_RUNS.c.id == bindparam("r_run_id"))
        .values(**run_values)
        .returning(_RUNS.c.status)
        .cte("progressed")
    )
    by_sequence = written.c.sequence_id
    statement = select(
        select(appended.c.message_ids).scalar_subquery(),
        select(progressed.c.status).scalar_subquery(),
        select(func.array_agg(aggregate_order_by(written.c.id, by_sequence))).scalar_subquery(),
        select(func.array_agg(aggregate_order_by(by_sequence, by_sequence))).scalar_subquery(),
    )
    if checked and recompiled is not None:
        statement = statement.add_columns(select(func.count()).select_from(recompiled).scalar_subquery())
    if with_step:
        step = insert(_STEPS).values({c: _typed(f"s_{c.key}", _STEPS, c.key) for _, c in _STEP_COLUMNS})
        side.insert(0, step.cte("stepped"))
        if traced:
            side.insert(1, trace_insert().cte("traced"))
    return DriverSQL(statement.add_cte(*side) if side else statement)


def fits(rows: Sequence[orm.Message], end: RunEnd | None) -> bool:
    """Whether `write_step` takes these rows and this end (a run's error merges into its metadata elsewhere)."""
    return 0 < len(rows) <= MAX_ROWS and (end is None or end.error is None)


async def write_step(
    session: AsyncSession | Driver,
    *,
    agent_id: str,
    conversation_id: str | None,
    run_id: str,
    step: orm.Step | None,
    rows: Sequence[orm.Message],
    num_steps: int,
    tools_used: list[str],
    last_stop_reason: str | None,
    end: RunEnd | None,
    system: SystemWrite | None = None,
    lock_key: int | None = None,
    now: datetime | None = None,
    trace: TraceWrite | None = None,
) -> StepWritten:
    """Write the step row (unless None), `rows` (their `sequence_id` set from the database, in list order), append
    their ids to the thread's window (the conversation's when `conversation_id` is given, else the agent's) and
    record the run's progress, in one statement (see `fits`); with `system`, rewrite system messages and the
    agent's recompile time too.

    `session`: a session whose transaction holds the agent's xact lock, or a driver with no transaction open and
    `lock_key` (the agent's), when the statement commits by itself: it then takes the lock itself, in the filter of
    its thread UPDATE (evaluated once, before that UPDATE reads the row), so a concurrent holder's read-modify-write
    of the window (a compaction, a reset) ends before this append reads the row, which it then appends to.
    `now`: the time the rows are written at (their `updated_at`; the present unless given). `trace`: the step's
    provider trace, written with the step row (`runs.trace_write`)."""
    now = now or utcnow()
    params: dict[str, Any] = {
        "a_agent_id": agent_id,
        "c_conversation_id": conversation_id,
        "a_new_ids": [row.id for row in rows],
        "a_updated_at": now,
        "t_updated_at": now,
        "a_stop_reason": last_stop_reason,
        "r_run_id": run_id,
        "r_num_steps": num_steps,
        "r_tools_used": tools_used,
        "r_updated_at": now,
    }
    for i, row in enumerate(rows):
        row.created_at = row.created_at or now
        row.updated_at = row.updated_at or row.created_at
        for key, column in _MESSAGE_COLUMNS:
            params[f"m{i}_{column}"] = getattr(row, key)
    if step is not None:
        for column, value in orm_insert_values(step, _STEP_COLUMNS).items():
            params[f"s_{column}"] = value
        if trace is not None:
            params.update(trace_params(trace, now))
    if end is not None:
        params.update(
            r_status=end.status,
            r_stop_reason=end.stop_reason,
            r_completed_at=datetime.now(UTC),
            r_duration_ns=end.duration_ns,
        )
    if system is not None:
        params.update(
            y_message_ids=[message_id for message_id, _ in system.texts],
            y_texts=[text for _, text in system.texts],
            y_updated_at=now,
            y_compiled_at=system.compiled_at,
        )
        if system.expected is not None:
            params.update(
                y_expected=system.expected,
                b_ids=[block_id for block_id, _ in system.blocks],
                b_values=[value for _, value in system.blocks],
            )
    statement = _statement(
        len(rows),
        step is not None,
        last_stop_reason is not None,
        end is not None,
        conversation_id is not None,
        system is not None,
        lock_key is not None,
        system is not None and system.expected is not None,
        step is not None and trace is not None,
    )
    if lock_key is not None:
        params["l_key"] = lock_key
    driver = session if isinstance(session, Driver) else await driver_of(session)
    record = await driver.fetchrow(statement, params)
    message_ids, status, ids, sequences = record[:4]
    sequence = dict(zip(ids or [], sequences or [], strict=True))
    for row in rows:
        row.sequence_id = sequence[row.id]
    checked = system is not None and system.expected is not None
    return StepWritten(list(message_ids or []), status, not checked or record[4] > 0)
