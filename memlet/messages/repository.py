"""The messages table: history listings (by agent, run, step, organization), single messages, the one inserter,
in-context loads by id and text search.

Every listing orders by ``sequence_id`` and counts stored rows (not public views) toward ``limit``.
"""

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from sqlalchemy import (
    ARRAY,
    Select,
    String,
    Table,
    any_,
    bindparam,
    delete,
    func,
    insert,
    literal,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm
from memlet.db.base import utcnow
from memlet.db.driver import Driver, DriverSQL, driver_of
from memlet.db.message_row import MessageRow
from memlet.db.pagination import Page, fetch_page
from memlet.db.sql import array_rows, escape_like, int_array, text_array
from memlet.errors import NotFoundError
from memlet.messages.history_sql import agent_tail_statement, between_cursors, scoped, tail_rows, tail_shape
from memlet.messages.search_sql import SEARCH_ROWS, SearchShape, search_statement, tsquery_terms
from memlet.messages.window_sql import IN_CONTEXT, REVALIDATE

M = orm.Message
_TABLE: Table = M.__table__  # type: ignore[assignment]
# (attribute, column) of every column but the identity, which the database numbers.
_MESSAGE_COLUMNS = tuple((c.key, c.columns[0].key) for c in M.__mapper__.column_attrs if c.key != "sequence_id")
# A Core insert on the table, not the ORM entity: one compiled statement for any number of rows, which SQLAlchemy's
# insertmanyvalues sends as a single INSERT ... VALUES ... RETURNING, with no ORM bulk-persistence layer per call.
_INSERT = insert(_TABLE).returning(_TABLE.c.id, _TABLE.c.sequence_id)
# A step writes a handful of rows: up to this many, one prebuilt INSERT ... VALUES per row count, run on the driver
# connection (`memlet.db.driver`), with the values Core would send (a None in a JSONB column is JSON null, as there).
_DRIVER_MAX_ROWS = 8


@lru_cache(maxsize=_DRIVER_MAX_ROWS)
def _insert_rows(count: int) -> DriverSQL:
    rows: list[dict[str, Any]] = [
        {column: bindparam(f"r{i}_{column}", type_=_TABLE.c[column].type) for _, column in _MESSAGE_COLUMNS}
        for i in range(count)
    ]
    return DriverSQL(insert(_TABLE).values(rows).returning(_TABLE.c.id, _TABLE.c.sequence_id))


class MessageRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def get_or_404(self, org_id: str, message_id: str) -> orm.Message:
        """The row, or the 404 Letta answers for an unknown or foreign id."""
        row = await self.find(org_id, message_id)
        if row is None:
            raise NotFoundError("Message", message=f"Message with id {message_id} not found.")
        return row

    async def find(self, org_id: str, message_id: str) -> orm.Message | None:
        return await self.session.scalar(select(M).where(M.id == message_id, M.organization_id == org_id))

    async def foreign_ids(self, agent_id: str, message_ids: Sequence[str]) -> list[str]:
        """The ids in ``message_ids`` that name no message of this agent (another agent's, or none at all)."""
        wanted = list(dict.fromkeys(message_ids))
        if not wanted:
            return []
        own = set(await self.session.scalars(select(M.id).where(M.id.in_(wanted), M.agent_id == agent_id)))
        return [i for i in wanted if i not in own]

    async def ensure_cursors(self, agent_id: str, *cursors: str | None) -> None:
        """404 for a cursor that names no message of this agent, with Letta's wording."""
        wanted = [c for c in cursors if c]
        if not wanted:
            return
        found = set(await self.session.scalars(select(M.id).where(M.id.in_(wanted), M.agent_id == agent_id)))
        for cursor in wanted:
            if cursor not in found:
                raise NotFoundError("Message", message=f"No message found with id '{cursor}' for agent '{agent_id}'.")

    async def agent_tail(
        self,
        org_id: str,
        agent_id: str,
        *,
        after: str | None,
        before: str | None,
        limit: int | None,
        group_id: str | None = None,
        conversation_id: str | None = None,
    ) -> tuple[str, list[orm.Message]] | None:
        """The newest ``limit`` rows of an agent of the organization between the cursors, oldest first (Letta's
        default history view), and the agent's type, in one statement (`history_sql.py`); None when the agent is not
        the organization's. Cursors are absolute, matching the oldest-first display: ``after`` = newer than,
        ``before`` = older than, so a client that pages backwards with ``before=<first id>`` walks the whole history
        once."""
        shape = tail_shape(group_id=group_id, conversation_id=conversation_id, after=after, before=before, limit=limit)
        params = {
            "org_id": org_id,
            "agent_id": agent_id,
            "group_id": group_id,
            "conversation_id": conversation_id,
            "after": after,
            "before": before,
            "limit": limit,
        }
        records = await (await driver_of(self.session)).fetch(agent_tail_statement(shape), params)
        return tail_rows(records)

    async def tail_for_org(
        self, org_id: str, *, after: str | None, before: str | None, limit: int | None, **filters: Any
    ) -> list[orm.Message]:
        stmt = _filtered(select(M).where(M.organization_id == org_id), **filters)
        return await self._tail(stmt, after, before, limit)

    async def _tail(
        self, stmt: Select[Any], after: str | None, before: str | None, limit: int | None
    ) -> list[orm.Message]:
        stmt = between_cursors(stmt, after=after or None, before=before or None).order_by(M.sequence_id.desc())
        if limit is not None and limit > 0:
            stmt = stmt.limit(limit)
        rows = list(await self.session.scalars(stmt))
        return rows[::-1]

    async def page_for_agent(self, agent_id: str, page: Page, **filters: Any) -> list[orm.Message]:
        """Rows in the requested order with sort-relative cursors (see ``memlet.db.pagination``)."""
        return await self._page(_filtered(select(M).where(M.agent_id == agent_id), **filters), page)

    async def page_for_run(self, run_id: str, page: Page) -> list[orm.Message]:
        return await self._page(select(M).where(M.run_id == run_id), page)

    async def page_for_runs(self, run_ids: Sequence[str], page: Page) -> list[orm.Message]:
        """Messages of any of `run_ids` (a batch's runs), in one page."""
        if not run_ids:
            return []
        return await self._page(select(M).where(M.run_id.in_(list(run_ids))), page)

    async def page_for_step(self, step_id: str, page: Page) -> list[orm.Message]:
        return await self._page(select(M).where(M.step_id == step_id), page)

    async def page_for_org(self, org_id: str, page: Page, **filters: Any) -> list[orm.Message]:
        return await self._page(_filtered(select(M).where(M.organization_id == org_id), **filters), page)

    async def _page(self, stmt: Select[Any], page: Page) -> list[orm.Message]:
        # sequence_id is unique, so no id tie-break: ix_messages_agent_seq and ix_messages_run_seq serve any cursor
        # position in either order with no sort step.
        return await fetch_page(self.session, stmt, page, sort_col=M.sequence_id, id_col=M.id, unique_sort=True)

    async def add(self, rows: Sequence[orm.Message]) -> None:
        """Insert rows in one statement; sequence ids follow the list order (VALUES rows are numbered in order)."""
        if not rows:
            return
        now = utcnow()
        values = []
        for row in rows:
            row.created_at = row.created_at or now
            row.updated_at = row.updated_at or row.created_at
            values.append({column: getattr(row, key) for key, column in _MESSAGE_COLUMNS})
        if len(rows) <= _DRIVER_MAX_ROWS:
            params = {
                f"r{i}_{column}": value for i, row_values in enumerate(values) for column, value in row_values.items()
            }
            written = await (await driver_of(self.session)).fetch(_insert_rows(len(rows)), params)
            sequence: dict[str, int] = {record[0]: record[1] for record in written}
        else:
            conn = await self.session.connection()  # a Core INSERT: no ORM execution layer
            result = await conn.execute(_INSERT, values)
            sequence = {row[0]: row[1] for row in result}
        for row in rows:
            row.sequence_id = sequence[row.id]

    async def by_ids(self, agent_id: str, message_ids: Sequence[str]) -> list[orm.Message]:
        """The agent's rows for `message_ids`, in that order (unknown ids and other agents' rows are skipped)."""
        if not message_ids:
            return []
        wanted = any_(literal(list(message_ids), ARRAY(String)))  # one statement text for any length
        rows = await self.session.scalars(select(M).where(M.id == wanted, M.agent_id == agent_id))
        by_id = {row.id: row for row in rows}
        return [by_id[i] for i in message_ids if i in by_id]

    async def approval_requests(self, message_ids: Sequence[str]) -> list[orm.Message]:
        """Those of `message_ids` that are approval requests (rows of role `approval` holding tool calls)."""
        if not message_ids:
            return []
        wanted = any_(literal(list(message_ids), ARRAY(String)))
        stmt = select(M).where(M.id == wanted, M.role == "approval", M.tool_calls.is_not(None))
        return [row for row in await self.session.scalars(stmt) if row.tool_calls]

    async def latest_tool_rows(self, agent_id: str) -> list[orm.Message]:
        """The agent's newest tool-return row in its whole history (any thread), after the approval answer stored
        just before it in the same step, if there is one; [] when the agent has no tool row."""
        stmt = select(M).where(M.agent_id == agent_id, M.role == "tool").order_by(M.sequence_id.desc()).limit(1)
        tool = await self.session.scalar(stmt)
        if tool is None:
            return []
        if tool.step_id is None:
            return [tool]
        # The step's approval rows before it: the request (with its calls) and the answer that followed it.
        stmt = select(M).where(
            M.agent_id == agent_id,
            M.step_id == tool.step_id,
            M.role == "approval",
            M.sequence_id < tool.sequence_id,
        )
        before = (await self.session.scalars(stmt.order_by(M.sequence_id.desc()).limit(1))).first()
        return [before, tool] if before is not None and not before.tool_calls else [tool]

    async def in_context(self, agent_id: str, message_ids: Sequence[str]) -> list[MessageRow]:
        """`by_ids` as plain read-only rows, for the loop's in-context buffer (on the driver: no ORM entities, no
        SQLAlchemy rows)."""
        if not message_ids:
            return []
        driver = await driver_of(self.session)
        rows = await driver.fetch(IN_CONTEXT, {"ids": text_array(message_ids), "agent_id": agent_id})
        make = MessageRow._make
        return [make(row) for row in rows]

    async def revalidate(
        self, agent_id: str, message_ids: Sequence[str], held: Sequence[int]
    ) -> list[tuple[int, int | None, MessageRow | None]]:
        """The positions of the window that differ from what the caller holds (`held`: the `xmin` it holds per id,
        `window_sql.UNSEEN` for none), in window order: (index in `message_ids`, the row's current `xmin`, the row)
        where the version is not the held one, (index, None, None) where the id has no row of the agent. Every other
        position holds the stored row."""
        if not message_ids:
            return []
        driver = await driver_of(self.session)
        params = {"ids": text_array(message_ids), "seen": int_array(held), "agent_id": agent_id}
        rows = await driver.fetch(REVALIDATE, params)
        make = MessageRow._make
        return [(row[0] - 1, row[1], None if row[1] is None else make(row[2:])) for row in rows]

    async def between(
        self, agent_id: str, *, after: str | None, through: str | None, limit: int = 500
    ) -> list[orm.Message]:
        """The agent's messages after `after` up to and including `through` (all threads), oldest first; the
        newest `limit` of them. An unknown or missing bound is no bound."""
        stmt = select(M).where(M.agent_id == agent_id)
        if after is not None:
            start = select(M.sequence_id).where(M.id == after).scalar_subquery()
            stmt = stmt.where(M.sequence_id > func.coalesce(start, 0))
        if through is not None:
            end = select(M.sequence_id).where(M.id == through).scalar_subquery()
            stmt = stmt.where(M.sequence_id <= func.coalesce(end, M.sequence_id))
        rows = list(await self.session.scalars(stmt.order_by(M.sequence_id.desc()).limit(limit)))
        return rows[::-1]

    async def delete_for_agent(self, agent_id: str, message_ids: Sequence[str]) -> None:
        """Delete some of the agent's own messages (an imported agent's placeholder system message)."""
        if message_ids:
            await self.session.execute(delete(M).where(M.id.in_(list(message_ids)), M.agent_id == agent_id))

    async def delete_for_group(self, org_id: str, group_id: str) -> dict[str, list[str]]:
        """Hard-delete every message of the organization carrying ``group_id``; returns the deleted ids by agent."""
        rows = await self.session.execute(
            delete(M).where(M.organization_id == org_id, M.group_id == group_id).returning(M.agent_id, M.id)
        )
        deleted: dict[str, list[str]] = {}
        for agent_id, message_id in rows:
            deleted.setdefault(agent_id, []).append(message_id)
        return deleted

    async def count_for_agent(self, agent_id: str) -> int:
        """Every stored message of the agent, in context or not: the counter the triggers on `messages` keep on the
        agent row (no scan of the history, whatever its length)."""
        count = await self.session.scalar(select(orm.Agent.message_count).where(orm.Agent.id == agent_id))
        return int(count or 0)

    async def set_content(self, agent_id: str, message_id: str, content: list[dict[str, Any]]) -> None:
        """Rewrite one of the agent's own messages (never another agent's, whatever its message_ids say)."""
        await self.session.execute(update(M).where(M.id == message_id, M.agent_id == agent_id).values(content=content))

    async def set_system_texts(self, texts: Sequence[tuple[str, str, str]]) -> None:
        """Rewrite system messages as one text part each, `(agent_id, message_id, text)`, in one statement (each
        only among its agent's own messages, as `set_content`)."""
        if texts:
            agent_ids, message_ids, bodies = (list(column) for column in zip(*texts, strict=True))
            params = {"agent_ids": agent_ids, "message_ids": message_ids, "texts": bodies, "now": utcnow()}
            await self.session.execute(_SET_SYSTEM_TEXTS, params)

    @staticmethod
    async def search_via(
        driver: Driver,
        agent_id: str | None,
        *,
        query: str | None,
        roles: Sequence[str] | None,
        start: Any | None,
        end: Any | None,
        limit: int,
        organization_id: str | None = None,
        conversation_id: str | None = None,
    ) -> list[orm.Message]:
        """Messages matching `query`, best first; every message in scope, newest first, when there is no query.

        The text ranking, one statement: full-text matches first (any query word as a word prefix, through the GIN
        index `ix_messages_search_tsv`, best `ts_rank` first, newest first on ties), then, only if those do not fill
        `limit`, messages holding the query as a case-insensitive substring (Letta's own text search), newest
        first. Scoped to `agent_id` and/or `organization_id`; `roles` defaults to user and assistant
        (conversation_search's default). Calls to conversation_search itself are never results, as in Letta.

        One statement on `driver` (a session's, or a connection's with no transaction open), its rows made into
        detached entities.
        """
        terms = tsquery_terms(query) if query else ""
        shape = SearchShape(
            agent_id is not None,
            organization_id is not None,
            conversation_id is not None,
            start is not None,
            end is not None,
            "ranked" if terms else "substring" if query else "all",
        )
        params = {
            "roles": list(roles or ["user", "assistant"]),
            "agent_id": agent_id,
            "organization_id": organization_id,
            "conversation_id": conversation_id,
            "start": start,
            "end": end,
            "limit": limit,
            "terms": terms,
            "pattern": f"%{escape_like(query)}%" if query else "",
        }
        # On the driver: one statement, its rows made into detached entities with no ORM loading.
        rows = await driver.fetch(search_statement(shape), params)
        return [SEARCH_ROWS.detached(row) for row in rows]


_TEXTS = array_rows(
    "system_texts",
    agent_id=bindparam("agent_ids", type_=ARRAY(String)),
    message_id=bindparam("message_ids", type_=ARRAY(String)),
    text=bindparam("texts", type_=ARRAY(String)),
)
_SET_SYSTEM_TEXTS = (
    update(M)
    .where(M.id == _TEXTS.c.message_id, M.agent_id == _TEXTS.c.agent_id)
    .values(
        content=func.jsonb_build_array(func.jsonb_build_object("type", "text", "text", _TEXTS.c.text)),
        updated_at=bindparam("now"),
    )
    .execution_options(synchronize_session=False)
)


def _filtered(stmt: Select[Any], *, group_id: str | None = None, conversation_id: str | None = None) -> Select[Any]:
    return scoped(stmt, group=group_id or None, conversation=conversation_id)
