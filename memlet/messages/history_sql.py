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
    conversation: Any = {"any": None, "default": "default", "given": bindparam("conversation_id")}[shape.conversation]
    rows = scoped(rows, group=bindparam("group_id") if shape.group else None, conversation=conversation)
    return between_cursors(
        rows,
        after=bindparam("after") if shape.after else None,
        before=bindparam("before") if shape.before else None,
    )


def scoped(rows: Select[Any], *, group: Any = None, conversation: Any = None) -> Select[Any]:
    """Rows of a group and/or a conversation (None: any). `conversation` "default" is the agent's own history:
    messages outside any conversation. Each is a value or a bind parameter."""
    if group is not None:
        rows = rows.where(M.group_id == group)
    if isinstance(conversation, str) and conversation == "default":
        rows = rows.where(M.conversation_id.is_(None))
    elif conversation is not None:
        rows = rows.where(M.conversation_id == conversation)
    return rows


def between_cursors(rows: Select[Any], *, after: Any = None, before: Any = None) -> Select[Any]:
    """Rows after and/or before the messages with those ids (None: no bound), by `sequence_id`. Absolute cursors, as
    the oldest-first display shows them: `after` = newer than, `before` = older than. Each is a value or a bind
    parameter."""
    cursor = orm.Message.__table__.alias("cursor")  # type: ignore[attr-defined]
    if after is not None:
        rows = rows.where(M.sequence_id > select(cursor.c.sequence_id).where(cursor.c.id == after).scalar_subquery())
    if before is not None:
        rows = rows.where(M.sequence_id < select(cursor.c.sequence_id).where(cursor.c.id == before).scalar_subquery())
    return rows


def tail_rows(records: list[Any]) -> tuple[str, list[orm.Message]] | None:
    """The agent's type and its rows oldest first, from the statement's records; None when the agent was not found."""
    if not records:
        return None
    rows = [HISTORY_ROWS.detached(record) for record in records if record[_ID] is not None]
    return str(records[0][-1]), rows[::-1]
