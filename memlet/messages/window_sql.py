"""The in-context load's statements: a thread's window of messages by id, in window order, as `MessageRow` columns.

Both run on the driver (`memlet.db.driver`) every turn, with the window as one array literal parameter (`db.sql.text_array`; not
`IN ($1, ..., $n)`: one statement text whatever the window's length, so asyncpg's prepared statement and Postgres'
plan are reused turn after turn). The ids are joined `WITH ORDINALITY`, so the rows come back in window order,
each found by its primary key (with `id = ANY($1)` Postgres also probed the key, or filtered the agent's rows, and
spent ~0.2 ms more CPU per ~200-row window). An id with no row of the agent is left out.

`REVALIDATE` is the load for rows kept between turns (`memlet.loop.window_cache`): it passes, beside each id, the
`xmin` of the row version the caller holds (0: none), and returns only the positions that differ: a row whose
version is not the held one, with its current `xmin` and columns, or an id with no row of the agent (no version).
Postgres gives every new version of a row (any UPDATE) a new `xmin`, whoever wrote it, so an unchanged `xmin` means
the held row is the stored one. The versions are compared in a join that reads only ids and versions, and the
columns are read for the few rows that differ: with a 1,000-row window (two of them new) the statement took 2.2 ms
of Postgres when it joined and returned every row, 1.2 ms now, and the client decodes two rows instead of 1,000.
"""

from typing import Any

from sqlalchemy import String, Table, and_, bindparam, case, func, literal_column, or_, select
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.sql.elements import ColumnElement

from memlet.db import models as orm
from memlet.db.driver import DriverSQL
from memlet.db.message_row import MessageRow
from memlet.db.sql import Xid, array_parameter, row_version

M = orm.Message
_TABLE: Table = M.__table__  # type: ignore[assignment]
UNSEEN = 0  # the `xmin` passed for an id whose row the caller does not hold (no row version has xid 0)


def _row_column(field: str, table: Any = _TABLE) -> ColumnElement[Any]:
    """A column (of `table`, the messages table or an alias of it) as the in-context load reads it: a JSONB `null`
    (what an unset JSONB attribute is stored as) comes back as SQL NULL, which the driver hands over as None without
    running the JSON decoder."""
    column = table.c[M.__mapper__.column_attrs[field].columns[0].key]
    if not isinstance(column.type, JSONB):
        return column
    return func.nullif(column, literal_column("'null'::jsonb"), type_=column.type).label(column.key)


_COLUMNS = [_row_column(field) for field in MessageRow._fields]
_WINDOW = func.unnest(array_parameter("ids", String)).table_valued("id", with_ordinality="n").render_derived(name="w")
IN_CONTEXT = DriverSQL(
    select(*_COLUMNS)
    .join_from(_WINDOW, _TABLE, _TABLE.c.id == _WINDOW.c.id)
    .where(_TABLE.c.agent_id == bindparam("agent_id"))
    .order_by(_WINDOW.c.n)
)


_HELD = (
    func.unnest(array_parameter("ids", String), array_parameter("seen", Xid()))
    .table_valued("id", "seen", with_ordinality="n")
    .render_derived(name="w")
)

_XMIN = row_version("messages")
_HELD_IS_CURRENT = _HELD.c.seen == _XMIN  # `xid = xid` (every Postgres has it; `<>` came in 13)
_OF_AGENT = _TABLE.c.agent_id == bindparam("agent_id")
# Joined on the id alone, the agent checked after the join: with the agent's id in the join condition a plan made
# while the table was small (a prepared statement's generic plan, which cannot see the window's length) scanned
# all the agent's rows for every id of the window, ~25 ms of Postgres for 1,000 ids; by the key alone each id is
# one index probe whatever the plan.
_DIFFERS = (
    select(_HELD.c.n, _HELD.c.id, case((_OF_AGENT, _XMIN), else_=None).label("version"))
    .select_from(_HELD.outerjoin(_TABLE, _TABLE.c.id == _HELD.c.id))
    .where(or_(_TABLE.c.id.is_(None), _OF_AGENT.is_not(True), _HELD_IS_CURRENT.is_not(True)))
    .cte("differs")
)
_ROW = _TABLE.alias("stored")
REVALIDATE = DriverSQL(
    select(_DIFFERS.c.n, _DIFFERS.c.version, *(_row_column(field, _ROW) for field in MessageRow._fields))
    .select_from(_DIFFERS.outerjoin(_ROW, and_(_ROW.c.id == _DIFFERS.c.id, _DIFFERS.c.version.is_not(None))))
    .order_by(_DIFFERS.c.n)
)
