"""An agent's history listing with no order given (`GET /v1/agents/{id}/messages`, what the SDKs and Letta Code
send): the agent's type and its newest rows in one statement on the driver, built once per combination of filters.

Through the ORM it was two statements (the agent's type, for the 404 and the view, then the rows) with the ORM's
execution and loading around each. Here the agent's row is joined to the page (a left join, so an agent with no
message in the filters still answers one row of nulls) and the rows come back as detached entities (`RowShape`).
"""

from functools import lru_cache
from typing import Any, Literal, NamedTuple

from sqlalchemy import Integer, Select, bindparam, select, true

from memlet.db import models as orm
from memlet.db.driver import DriverSQL
from memlet.db.row_shape import RowShape

M = orm.Message
A = orm.Agent

HISTORY_ROWS = RowShape(orm.Message)
_ID = HISTORY_ROWS.keys.index("id")


class TailShape(NamedTuple):
    group: bool
    conversation: Literal["any", "default", "given"]
    after: bool
    before: bool
    limited: bool


def tail_shape(
    *, group_id: str | None, conversation_id: str | None, after: str | None, before: str | None, limit: int | None
) -> TailShape:
    conversation: Literal["any", "default", "given"] = (
        "any" if conversation_id is None else "default" if conversation_id == "default" else "given"
    )
    return TailShape(bool(group_id), conversation, bool(after), bool(before), limit is not None and limit > 0)


@lru_cache(maxsize=64)
def agent_tail_statement(shape: TailShape) -> DriverSQL:
    """The agent's type (last column) beside each of its newest `limit` rows, newest first; no row at all when the
    agent is not the organization's."""
    rows = select(*HISTORY_ROWS.columns).where(M.agent_id == bindparam("agent_id"))
    rows = _filters(rows, shape).order_by(M.sequence_id.desc())
    if shape.limited:
        rows = rows.limit(bindparam("limit", type_=Integer))
    page = rows.subquery("page")
    statement = (
        select(*(page.c[column.key] for column in HISTORY_ROWS.columns), A.agent_type)
        .select_from(A)
        .outerjoin(page, true())
        .where(A.id == bindparam("agent_id"), A.organization_id == bindparam("org_id"))
        .order_by(page.c.sequence_id.desc())
    )
    return DriverSQL(statement)


def _filters(rows: Select[Any], shape: TailShape) -> Select[Any]:
    if shape.group:
        rows = rows.where(M.group_id == bindparam("group_id"))
    # "default" is the agent's own history: messages outside any conversation.
    if shape.conversation == "default":
        rows = rows.where(M.conversation_id.is_(None))
    elif shape.conversation == "given":
        rows = rows.where(M.conversation_id == bindparam("conversation_id"))
    # Cursors are absolute (oldest-first display): `after` = newer than, `before` = older than.
    cursor = orm.Message.__table__.alias("cursor")  # type: ignore[attr-defined]
    if shape.after:
        after = select(cursor.c.sequence_id).where(cursor.c.id == bindparam("after")).scalar_subquery()
        rows = rows.where(M.sequence_id > after)
    if shape.before:
        before = select(cursor.c.sequence_id).where(cursor.c.id == bindparam("before")).scalar_subquery()
        rows = rows.where(M.sequence_id < before)
    return rows


def tail_rows(records: list[Any]) -> tuple[str, list[orm.Message]] | None:
    """The agent's type and its rows oldest first, from the statement's records; None when the agent was not found."""
    if not records:
        return None
    rows = [HISTORY_ROWS.detached(record) for record in records if record[_ID] is not None]
    return str(records[0][-1]), rows[::-1]
