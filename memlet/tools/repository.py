"""SQL for tools and their attachment to agents."""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Float,
    Select,
    String,
    Text,
    any_,
    bindparam,
    case,
    cast,
    delete,
    func,
    literal,
    null,
    or_,
    select,
)
from sqlalchemy.dialects.postgresql import ARRAY, aggregate_order_by, insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import ScalarSelect

from memlet.db import models as orm
from memlet.db.base import utcnow
from memlet.db.driver import DriverSQL, driver_of
from memlet.db.pagination import Page, fetch_page, unknown_cursors, without_cursors
from memlet.db.row_shape import RowShape
from memlet.db.sql import escape_like
from memlet.errors import NotFoundError

_TOOLS = orm.Tool.__table__
# Columns an upsert never overwrites: the row's identity and who made it.
_KEEP_ON_UPSERT = frozenset({"id", "organization_id", "name", "created_at", "created_by_id"})
_UNIQUE_NAME = ["organization_id", "name"]


# The agent's tools in attachment order (every step's load): built once, its cache key memoized.
_OF_AGENT = (
    select(orm.Tool)
    .join(orm.ToolAgent, orm.ToolAgent.tool_id == orm.Tool.id)
    .where(orm.ToolAgent.agent_id == bindparam("p_agent_id"))
    .order_by(orm.ToolAgent.position, orm.Tool.name)
)
TOOL_ROWS = RowShape(orm.Tool)


def agent_tools_array(agent_id: ColumnElement[str]) -> ScalarSelect[Any]:
    """The agent's tools in `of_agent`'s order as one array of `TOOL_ROWS` rows (NULL without any), to read with
    the agent in one statement."""
    ordered = aggregate_order_by(TOOL_ROWS.row(), orm.ToolAgent.position, orm.Tool.name)
    return (
        select(func.array_agg(ordered))
        .join_from(orm.ToolAgent, orm.Tool, orm.ToolAgent.tool_id == orm.Tool.id)
        .where(orm.ToolAgent.agent_id == agent_id)
        .scalar_subquery()
    )


_LINKS = (
    select(
        orm.ToolAgent.tool_id,
        func.array_agg(orm.ToolAgent.agent_id).label("agent_ids"),
        func.array_agg(orm.ToolAgent.position).label("positions"),
    )
    .where(orm.ToolAgent.agent_id == any_(bindparam("agent_ids", type_=ARRAY(String))))
    .group_by(orm.ToolAgent.tool_id)
    .subquery()
)
_FOR_AGENTS = DriverSQL(
    select(*TOOL_ROWS.columns, _LINKS.c.agent_ids, _LINKS.c.positions).join(_LINKS, _LINKS.c.tool_id == orm.Tool.id)
)

# An organization's tools by name (every agent's creation looks up its base tools): one statement text whatever the
# number of names, built once.
_BY_NAMES = select(orm.Tool).where(
    orm.Tool.name == func.any(bindparam("p_names", type_=ARRAY(String))), orm.Tool.organization_id == bindparam("p_org")
)


@dataclass(frozen=True)
class ToolFilters:
    """The filters shared by `GET /v1/tools/` and `GET /v1/tools/count` (lists already split and validated)."""

    names: Sequence[str] | None = None
    tool_ids: Sequence[str] | None = None
    search: str | None = None
    tool_types: Sequence[str] | None = None
    exclude_tool_types: Sequence[str] | None = None
    return_only_letta_tools: bool = False
    exclude_names: Sequence[str] | None = None
    project_id: str | None = None

    def apply(self, stmt: Select[Any], org_id: str) -> Select[Any]:
        stmt = stmt.where(orm.Tool.organization_id == org_id)
        if self.names is not None:
            stmt = stmt.where(orm.Tool.name.in_(self.names))
        if self.tool_ids is not None:
            stmt = stmt.where(orm.Tool.id.in_(self.tool_ids))
        if self.search:
            stmt = stmt.where(orm.Tool.name.ilike(f"%{escape_like(self.search)}%", escape="\\"))
        if self.tool_types is not None:
            stmt = stmt.where(orm.Tool.tool_type.in_(self.tool_types))
        if self.exclude_tool_types is not None:
            stmt = stmt.where(orm.Tool.tool_type.not_in(self.exclude_tool_types))
        if self.return_only_letta_tools:
            stmt = stmt.where(orm.Tool.tool_type.like("letta\\_%", escape="\\"))
        if self.exclude_names:
            stmt = stmt.where(orm.Tool.name.not_in(self.exclude_names))
        if self.project_id is not None:
            stmt = stmt.where(or_(orm.Tool.project_id == self.project_id, orm.Tool.project_id.is_(None)))
        return stmt


# Weights of a search term found in a tool's name, description and tags; a name equal to the whole query
# ranks above every partial match.
_NAME_WEIGHT, _DESCRIPTION_WEIGHT, _TAG_WEIGHT, _EXACT_NAME_BONUS = 3.0, 2.0, 1.0, 10.0
MAX_SEARCH_TERMS = 32


def search_terms(query: str) -> list[str]:
    """The query's distinct words (case-insensitive), in order, at most ``MAX_SEARCH_TERMS`` of them.

    Each word adds three bind parameters and three CASE terms: an unbounded query (12,000 words) passed Postgres'
    32,767-parameter limit and took the event loop minutes to compile.
    """
    return list(dict.fromkeys(word.lower() for word in query.split()))[:MAX_SEARCH_TERMS]


def _search_score(query: str | None) -> Any:
    """SQL for a tool's text-search score: the weighted count of the query's words found (case-insensitive)."""
    whole = (query or "").strip()
    if not whole:
        return literal(0.0, Float)
    score: Any = case((func.lower(orm.Tool.name) == whole.lower(), _EXACT_NAME_BONUS), else_=0.0)
    for term in search_terms(whole):
        pattern = f"%{escape_like(term)}%"
        for column, weight in (
            (orm.Tool.name, _NAME_WEIGHT),
            (func.coalesce(orm.Tool.description, ""), _DESCRIPTION_WEIGHT),
            (cast(orm.Tool.tags, Text), _TAG_WEIGHT),
        ):
            score = score + case((column.ilike(pattern, escape="\\"), weight), else_=0.0)
    return score


def _sql_nulls(values: dict[str, Any]) -> dict[str, Any]:
    # None would be stored in JSONB columns as the JSON value null; these columns mean SQL NULL.
    return {key: null() if value is None else value for key, value in values.items()}


def _upsert_set(excluded: Any, *, keep_tags: bool) -> dict[str, Any]:
    """ON CONFLICT assignments: every column from the new row except the identity ones."""
    values: dict[str, Any] = {}
    for column in _TOOLS.columns:
        if column.name in _KEEP_ON_UPSERT or (keep_tags and column.name == "tags"):
            continue
        values[column.name] = excluded[column.name]
    values["updated_at"] = utcnow()
    return values


class ToolRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def get_or_404(self, org_id: str, tool_id: str) -> orm.Tool:
        """The row, or the 404 Letta answers for an unknown or foreign id."""
        row = await self.find(org_id, tool_id)
        if row is None:
            raise NotFoundError("Tool", tool_id)
        return row

    async def find(self, org_id: str, tool_id: str) -> orm.Tool | None:
        return await self.session.scalar(
            select(orm.Tool).where(orm.Tool.id == tool_id, orm.Tool.organization_id == org_id)
        )

    async def find_by_name(self, org_id: str, name: str) -> orm.Tool | None:
        return await self.session.scalar(
            select(orm.Tool).where(orm.Tool.name == name, orm.Tool.organization_id == org_id)
        )

    async def name_taken(self, org_id: str, name: str, *, exclude_id: str) -> bool:
        """Whether another tool of the org has this name; locks that row so a concurrent rename waits."""
        found = await self.session.scalar(
            select(orm.Tool.id)
            .where(orm.Tool.organization_id == org_id, orm.Tool.name == name, orm.Tool.id != exclude_id)
            .with_for_update()
        )
        return found is not None

    async def by_ids(self, org_id: str, tool_ids: Sequence[str]) -> list[orm.Tool]:
        if not tool_ids:
            return []
        rows = await self.session.scalars(
            select(orm.Tool).where(orm.Tool.id.in_(tool_ids), orm.Tool.organization_id == org_id)
        )
        return list(rows)

    async def by_names(self, org_id: str, names: Sequence[str]) -> list[orm.Tool]:
        if not names:
            return []
        rows = await self.session.scalars(_BY_NAMES, {"p_names": list(names), "p_org": org_id})
        return list(rows)

    async def list_tools(self, org_id: str, filters: ToolFilters, page: Page) -> list[orm.Tool]:
        """A page of the org's tools. A cursor naming no tool of the org is ignored (the page starts at the
        beginning), as Letta's tool list ignores a cursor it cannot find."""
        unknown = await unknown_cursors(self.session, page, orm.Tool.id, orm.Tool.organization_id == org_id)
        return await fetch_page(
            self.session,
            filters.apply(select(orm.Tool), org_id),
            without_cursors(page, unknown),
            sort_col=orm.Tool.created_at,
            id_col=orm.Tool.id,
        )

    async def count(self, org_id: str, filters: ToolFilters) -> int:
        stmt = filters.apply(select(func.count()).select_from(orm.Tool), org_id)
        return int(await self.session.scalar(stmt) or 0)

    async def search(
        self,
        org_id: str,
        *,
        query: str | None,
        tool_types: Sequence[str] | None,
        tags: Sequence[str] | None,
        limit: int,
    ) -> list[tuple[orm.Tool, float]]:
        """Tools whose name, description or tags contain a word of `query`, best first, with their scores.

        Without a query every tool passing the filters matches (score 0), by name. `tags` matches any.
        """
        score = _search_score(query).label("score")
        stmt = select(orm.Tool, score).where(orm.Tool.organization_id == org_id)
        if tool_types:
            stmt = stmt.where(orm.Tool.tool_type.in_(list(tool_types)))
        if tags:
            stmt = stmt.where(orm.Tool.tags.op("?|")(cast(list(tags), ARRAY(String))))
        if query and query.split():
            stmt = stmt.where(score > 0)
        stmt = stmt.order_by(score.desc(), orm.Tool.name).limit(limit)
        return [(tool, float(value)) for tool, value in (await self.session.execute(stmt)).tuples()]

    async def upsert(self, values: dict[str, Any]) -> orm.Tool:
        """Insert, or overwrite the org's tool of the same name (keeping its id). Empty tags keep the old tags."""
        new = insert(orm.Tool).values(**_sql_nulls(values))
        stmt = new.on_conflict_do_update(
            index_elements=_UNIQUE_NAME, set_=_upsert_set(new.excluded, keep_tags=not values.get("tags"))
        ).returning(orm.Tool)
        tool = await self.session.scalar(stmt.execution_options(populate_existing=True))
        assert tool is not None  # DO UPDATE always returns the row
        return tool

    async def upsert_many(self, rows: Sequence[dict[str, Any]]) -> list[orm.Tool]:
        """Insert or overwrite many tools by name in one statement (rows sorted by name so that concurrent
        upserts lock in the same order and cannot deadlock)."""
        if not rows:
            return []
        new = insert(orm.Tool).values([_sql_nulls(r) for r in sorted(rows, key=lambda r: str(r["name"]))])
        stmt = new.on_conflict_do_update(
            index_elements=_UNIQUE_NAME, set_=_upsert_set(new.excluded, keep_tags=False)
        ).returning(orm.Tool)
        return list(await self.session.scalars(stmt.execution_options(populate_existing=True)))

    async def delete(self, org_id: str, tool_id: str) -> int:
        """Delete a tool; its agent links go with it (ON DELETE CASCADE)."""
        result = await self.session.execute(
            delete(orm.Tool).where(orm.Tool.id == tool_id, orm.Tool.organization_id == org_id)
        )
        return int(result.rowcount or 0)  # type: ignore[attr-defined]

    async def add(self, values: dict[str, Any]) -> orm.Tool:
        """Insert a new tool (no upsert: an existing tool of the same name is an IntegrityError)."""
        tool = orm.Tool(**values)
        self.session.add(tool)
        await self.session.flush()
        return tool

    async def delete_many(self, org_id: str, tool_ids: Sequence[str]) -> int:
        if not tool_ids:
            return 0
        result = await self.session.execute(
            delete(orm.Tool).where(orm.Tool.id.in_(tool_ids), orm.Tool.organization_id == org_id)
        )
        return int(result.rowcount or 0)  # type: ignore[attr-defined]

    async def of_mcp_server(self, org_id: str, server_id: str) -> list[orm.Tool]:
        """The tools discovered from one MCP server (found by the server id in their metadata), by name."""
        rows = await self.session.scalars(
            select(orm.Tool)
            .where(
                orm.Tool.organization_id == org_id,
                orm.Tool.tool_type == "external_mcp",
                orm.Tool.metadata_["mcp"]["server_id"].astext == server_id,
            )
            .order_by(orm.Tool.created_at, orm.Tool.name)
        )
        return list(rows)

    async def for_agents(self, agent_ids: Sequence[str]) -> dict[str, list[orm.Tool]]:
        """Tools of many agents in one query, each list in attachment order.

        Agents mostly share the same tools (the base tools), so each tool row is fetched (and its JSON schema
        decoded) once, with the agents that hold it aggregated beside it; the lists share the row objects. Read on
        the driver as detached rows (the ORM's loading was most of the cost), so they show what the session has
        written, not changes it holds unflushed.
        """
        if not agent_ids:
            return {}
        records = await (await driver_of(self.session)).fetch(_FOR_AGENTS, {"agent_ids": list(agent_ids)})
        ordered: dict[str, list[tuple[int, str, orm.Tool]]] = defaultdict(list)
        for record in records:
            tool = TOOL_ROWS.detached(record)  # the holders and their positions trail the tool's columns
            for agent_id, position in zip(record[-2], record[-1], strict=True):
                ordered[agent_id].append((position, tool.name, tool))
        return {agent_id: [t for *_, t in sorted(items, key=lambda i: i[:2])] for agent_id, items in ordered.items()}

    async def list_for_agent(self, agent_id: str, page: Page) -> list[orm.Tool]:
        """One page of an agent's tools, ordered by the tools' creation time."""
        stmt: Select[Any] = (
            select(orm.Tool)
            .join(orm.ToolAgent, orm.ToolAgent.tool_id == orm.Tool.id)
            .where(orm.ToolAgent.agent_id == agent_id)
        )
        return await fetch_page(self.session, stmt, page, sort_col=orm.Tool.created_at, id_col=orm.Tool.id)

    async def attach(self, agent_id: str, tool_ids: Sequence[str], *, start: int | None = None) -> None:
        """Attach tools after the agent's existing ones; attaching twice is a no-op."""
        if not tool_ids:
            return
        if start is None:
            start = await self.session.scalar(
                select(func.coalesce(func.max(orm.ToolAgent.position) + 1, 0)).where(orm.ToolAgent.agent_id == agent_id)
            )
        values = [{"agent_id": agent_id, "tool_id": t, "position": (start or 0) + i} for i, t in enumerate(tool_ids)]
        await self.session.execute(insert(orm.ToolAgent).values(values).on_conflict_do_nothing())

    async def detach(self, agent_id: str, tool_id: str) -> int:
        result = await self.session.execute(
            delete(orm.ToolAgent).where(orm.ToolAgent.agent_id == agent_id, orm.ToolAgent.tool_id == tool_id)
        )
        return int(result.rowcount or 0)  # type: ignore[attr-defined]

    async def of_agent(self, agent_id: str) -> list[orm.Tool]:
        """The agent's tools in attachment order."""
        rows = await self.session.scalars(_OF_AGENT, {"p_agent_id": agent_id})
        return list(rows)
