"""SQL for agents: rows, tags, identities links, listing with filters (`list_filters`) and cursor pagination."""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    ARRAY,
    BigInteger,
    ColumnElement,
    String,
    Table,
    bindparam,
    delete,
    exists,
    func,
    literal,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import aggregate_order_by, insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import set_committed_value

from memlet.agents.list_filters import AgentFilters, sort_column
from memlet.blocks.repository import BLOCK_ROWS, agent_blocks_array
from memlet.db import models as orm
from memlet.db.driver import DriverSQL, driver_of
from memlet.db.locks import lock_key
from memlet.db.pagination import Page, fetch_page, paginate
from memlet.db.row_shape import RowShape
from memlet.db.sql import any_of, row_version
from memlet.errors import NotFoundError
from memlet.tools.repository import TOOL_ROWS, agent_tools_array

# The table itself, for the updates every turn runs: Core statements skip the ORM's bulk-update layer and its
# identity-map synchronisation, which these short sessions never need.
_AGENTS: Table = orm.Agent.__table__  # type: ignore[assignment]

# The statements of every step's commit, built once: SQLAlchemy memoizes a statement's cache key on the object, so
# executing a prebuilt one skips building, coercing and cache-keying the same SQL on every call.
_LOCK_FOR_COMMIT = DriverSQL(
    select(func.pg_advisory_xact_lock(bindparam("key", type_=BigInteger)))
    .select_from(_AGENTS)
    .where(_AGENTS.c.id == bindparam("agent_id"))
    .with_for_update(read=True, key_share=True)
)
_APPEND = (
    update(_AGENTS)
    .where(_AGENTS.c.id == bindparam("agent_id"))
    .values(message_ids=_AGENTS.c.message_ids.op("||")(bindparam("new_ids", type_=ARRAY(String))))
    .returning(_AGENTS.c.message_ids)
)
# The step commit's statements, run on the driver connection (`memlet.db.driver`).
_APPEND_MESSAGE_IDS = DriverSQL(_APPEND)
_APPEND_MESSAGE_IDS_AND_STOP = DriverSQL(
    _APPEND.values(last_stop_reason=bindparam("stop_reason", type_=_AGENTS.c.last_stop_reason.type))
)
# The agent by id within its organization (every step's load, and most routes).
_FIND = select(orm.Agent).where(orm.Agent.id == bindparam("p_id"), orm.Agent.organization_id == bindparam("p_org"))
_FIND_FOR_UPDATE = _FIND.with_for_update()
AGENT_ROWS = RowShape(orm.Agent)
# The agent with its blocks and tools (every step's load): one statement on the driver, the blocks and tools as
# arrays of rows in attachment order. `with_memory` reads them back from a row that starts with these columns.
WITH_MEMORY_COLUMNS = (
    *AGENT_ROWS.columns,
    agent_blocks_array(_AGENTS.c.id).label("blocks"),
    agent_tools_array(_AGENTS.c.id).label("tools"),
)
WITH_MEMORY_READ = select(*WITH_MEMORY_COLUMNS).where(
    _AGENTS.c.id == bindparam("agent_id"), _AGENTS.c.organization_id == bindparam("org_id")
)
_WITH_MEMORY = DriverSQL(WITH_MEMORY_READ)


@dataclass
class AgentWithMemory:
    """An agent row with its blocks and tools in attachment order, all detached (read without a session's
    identity map: writing one back takes an explicit statement, or `Session.add`)."""

    agent: orm.Agent
    blocks: list[orm.Block]
    tools: list[orm.Tool]


def with_memory(row: Sequence[Any]) -> AgentWithMemory:
    """The detached agent, blocks and tools of a row that starts with `WITH_MEMORY_COLUMNS`."""
    width = len(AGENT_ROWS)
    return AgentWithMemory(
        AGENT_ROWS.detached(row), BLOCK_ROWS.detached_all(row[width]), TOOL_ROWS.detached_all(row[width + 1])
    )


_SET_LAST_STOP_REASON = DriverSQL(
    update(_AGENTS)
    .where(
        _AGENTS.c.id == bindparam("agent_id"),
        _AGENTS.c.last_stop_reason.is_distinct_from(bindparam("stop_reason", type_=_AGENTS.c.last_stop_reason.type)),
    )
    .values(last_stop_reason=bindparam("stop_reason"))
)


@dataclass(frozen=True)
class AgentLinks:
    """What an agent links to by id: its tags (sorted), identities and folders (in attachment order), and whether it
    manages a group (most agents do not: their page then needs no group statement)."""

    tags: list[str]
    identity_ids: list[str]
    source_ids: list[str]
    manages_group: bool = False


def _link_columns(managers: bool) -> tuple[ColumnElement[Any], ...]:
    """One array per link table and the manager flag, each a subquery on the agent row (for `links_for` and pages).

    Without ``managers`` the flag is a constant false and `groups` is not read."""
    a, t, i, s, g = orm.Agent, orm.AgentTag, orm.IdentityAgent, orm.SourceAgent, orm.Group
    return (
        func.array(select(t.tag).where(t.agent_id == a.id).order_by(t.tag).scalar_subquery()),
        func.array(select(i.identity_id).where(i.agent_id == a.id).order_by(i.identity_id).scalar_subquery()),
        func.array(select(s.source_id).where(s.agent_id == a.id).order_by(s.created_at, s.source_id).scalar_subquery()),
        exists().where(g.manager_agent_id == a.id) if managers else literal(False),
    )


_XMIN = row_version("agents")


def _links(tags: Sequence[str], identity_ids: Sequence[str], source_ids: Sequence[str], manager: bool) -> AgentLinks:
    return AgentLinks(list(tags), list(identity_ids), list(source_ids), bool(manager))


class AgentRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def add(self, agent: orm.Agent) -> None:
        self.session.add(agent)
        await self.session.flush()

    async def get_or_404(self, org_id: str, agent_id: str, *, for_update: bool = False) -> orm.Agent:
        """The row, or the 404 Letta answers for an unknown or foreign id."""
        row = await self.find(org_id, agent_id, for_update=for_update)
        if row is None:
            raise NotFoundError("Agent", agent_id)
        return row

    async def find(self, org_id: str, agent_id: str, *, for_update: bool = False) -> orm.Agent | None:
        stmt = _FIND_FOR_UPDATE if for_update else _FIND
        return await self.session.scalar(stmt, {"p_id": agent_id, "p_org": org_id})

    async def find_with_memory(self, org_id: str, agent_id: str) -> AgentWithMemory | None:
        """`find` with `BlockRepository.of_agent` and `ToolRepository.of_agent`, in one statement."""
        driver = await driver_of(self.session)
        row = await driver.fetchrow(_WITH_MEMORY, {"agent_id": agent_id, "org_id": org_id})
        return None if row is None else with_memory(row)

    async def in_deployment(self, org_id: str, deployment_id: str) -> list[orm.Agent]:
        """The agents a template deployment created, oldest first."""
        rows = await self.session.scalars(
            select(orm.Agent)
            .where(orm.Agent.organization_id == org_id, orm.Agent.deployment_id == deployment_id)
            .order_by(orm.Agent.created_at, orm.Agent.id)
        )
        return list(rows)

    async def agent_type(self, org_id: str, agent_id: str) -> str | None:
        return await self.session.scalar(
            select(orm.Agent.agent_type).where(orm.Agent.id == agent_id, orm.Agent.organization_id == org_id)
        )

    async def by_ids(self, agent_ids: Sequence[str]) -> list[orm.Agent]:
        if not agent_ids:
            return []
        return list(await self.session.scalars(select(orm.Agent).where(orm.Agent.id.in_(agent_ids))))

    async def list_page(self, org_id: str, filters: AgentFilters, page: Page, *, sort_by: str) -> list[orm.Agent]:
        return await fetch_page(
            self.session,
            filters.apply(select(orm.Agent), org_id),
            page,
            sort_col=sort_column(sort_by, page.descending),
            id_col=orm.Agent.id,
        )

    async def list_page_with_links(
        self,
        org_id: str,
        filters: AgentFilters,
        page: Page,
        *,
        sort_by: str,
        managers: bool,
        ignore_unknown_cursors: bool = False,
    ) -> list[tuple[orm.Agent, AgentLinks, int]]:
        """A page of agents with their links and the `xmin` of each row's version, in one statement (what
        `list_page` and `links_for` read in two). With `ignore_unknown_cursors` (`GET /v1/agents/`, as in Letta) a
        cursor that names no agent, a deleted one say, is ignored: the page starts at the top."""
        stmt = filters.apply(select(orm.Agent, _XMIN, *_link_columns(managers)), org_id)
        sort_col = sort_column(sort_by, page.descending)
        paged, reverse = paginate(
            stmt, page, sort_col=sort_col, id_col=orm.Agent.id, ignore_unknown_cursors=ignore_unknown_cursors
        )
        rows = [(agent, _links(*links), xmin) for agent, xmin, *links in await self.session.execute(paged)]
        return rows[::-1] if reverse else rows

    async def count(self, org_id: str, filters: AgentFilters) -> int:
        stmt = filters.apply(select(func.count()).select_from(orm.Agent), org_id)
        return int(await self.session.scalar(stmt) or 0)

    async def delete(self, agent_id: str) -> None:
        await self.session.execute(delete(orm.Message).where(orm.Message.agent_id == agent_id))
        await self.session.execute(delete(orm.Agent).where(orm.Agent.id == agent_id))

    async def links_for(self, agent_ids: Sequence[str], *, managers: bool = True) -> dict[str, AgentLinks]:
        """Tags, identity ids, folder ids and the manager flag of many agents in one statement."""
        if not agent_ids:
            return {}
        rows = await self.session.execute(
            select(orm.Agent.id, *_link_columns(managers)).where(orm.Agent.id == any_of(agent_ids))
        )
        return {agent_id: _links(*links) for agent_id, *links in rows}

    async def tags_for(self, agent_ids: Sequence[str]) -> dict[str, list[str]]:
        result: dict[str, list[str]] = defaultdict(list)
        if agent_ids:
            rows = await self.session.execute(
                select(orm.AgentTag.agent_id, orm.AgentTag.tag)
                .where(orm.AgentTag.agent_id.in_(agent_ids))
                .order_by(orm.AgentTag.tag)
            )
            for agent_id, tag in rows:
                result[agent_id].append(tag)
        return result

    async def set_tags(self, agent_id: str, tags: Sequence[str], *, replace: bool = True) -> None:
        if replace:
            await self.session.execute(delete(orm.AgentTag).where(orm.AgentTag.agent_id == agent_id))
        if tags:
            values = [{"agent_id": agent_id, "tag": t} for t in dict.fromkeys(tags)]
            await self.session.execute(insert(orm.AgentTag).values(values).on_conflict_do_nothing())

    async def identities_for(self, agent_ids: Sequence[str]) -> dict[str, list[orm.Identity]]:
        result: dict[str, list[orm.Identity]] = defaultdict(list)
        if agent_ids:
            rows = await self.session.execute(
                select(orm.IdentityAgent.agent_id, orm.Identity)
                .join(orm.Identity, orm.Identity.id == orm.IdentityAgent.identity_id)
                .where(orm.IdentityAgent.agent_id.in_(agent_ids))
            )
            for agent_id, identity in rows:
                result[agent_id].append(identity)
        return result

    async def set_identities(self, agent_id: str, identity_ids: Sequence[str], *, replace: bool = True) -> None:
        if replace:
            await self.session.execute(delete(orm.IdentityAgent).where(orm.IdentityAgent.agent_id == agent_id))
        if identity_ids:
            values = [{"agent_id": agent_id, "identity_id": i} for i in dict.fromkeys(identity_ids)]
            await self.session.execute(insert(orm.IdentityAgent).values(values).on_conflict_do_nothing())

    async def identities_by_ids(self, org_id: str, identity_ids: Sequence[str]) -> list[orm.Identity]:
        if not identity_ids:
            return []
        rows = await self.session.scalars(
            select(orm.Identity).where(orm.Identity.id.in_(identity_ids), orm.Identity.organization_id == org_id)
        )
        return list(rows)

    async def lock_for_commit(self, agent_id: str) -> bool:
        """Take the agent's transaction lock and hold its row against a concurrent delete (``FOR KEY SHARE``), in one
        statement; False when the agent is gone (a turn's rows then have nowhere to go)."""
        driver = await driver_of(self.session)
        return await driver.fetchrow(_LOCK_FOR_COMMIT, {"key": lock_key(agent_id), "agent_id": agent_id}) is not None

    async def reload(self, agent_id: str) -> orm.Agent | None:
        """Re-read the agent row (fresh message_ids), replacing what the session holds."""
        return await self.session.scalar(
            select(orm.Agent).where(orm.Agent.id == agent_id).execution_options(populate_existing=True)
        )

    async def set_last_stop_reason(self, agent_id: str, stop_reason: str) -> None:
        driver = await driver_of(self.session)
        await driver.fetch(_SET_LAST_STOP_REASON, {"agent_id": agent_id, "stop_reason": stop_reason})

    async def set_message_ids(self, agent: orm.Agent, message_ids: Sequence[str]) -> None:
        """Replace the in-context list, by statement: `agent` may be a detached row (a turn's load)."""
        window = list(message_ids)
        await self.session.execute(
            update(orm.Agent)
            .where(orm.Agent.id == agent.id)
            .values(message_ids=window)
            .execution_options(synchronize_session=False)
        )
        set_committed_value(agent, "message_ids", window)

    async def remove_message_ids(self, agent_id: str, message_ids: Sequence[str]) -> None:
        """Take ids out of the agent's in-context list in one statement, keeping the order of the rest."""
        if not message_ids:
            return
        ids = func.unnest(orm.Agent.message_ids).table_valued("x", with_ordinality="n").render_derived()
        kept = (
            select(func.array_agg(aggregate_order_by(ids.c.x, ids.c.n)))
            .where(ids.c.x.not_in(list(message_ids)))
            .scalar_subquery()
        )
        await self.session.execute(
            update(orm.Agent)
            .where(orm.Agent.id == agent_id)
            .values(message_ids=func.coalesce(kept, literal([], ARRAY(String))))
        )

    async def append_message_ids(
        self, agent_id: str, message_ids: Sequence[str], *, last_stop_reason: str | None = None
    ) -> list[str]:
        """Append to the agent's in-context list atomically, and record the last stop reason when a turn ends with
        this write; returns the whole list."""
        params: dict[str, Any] = {"agent_id": agent_id, "new_ids": list(message_ids)}
        stmt = _APPEND_MESSAGE_IDS
        if last_stop_reason is not None:
            stmt, params["stop_reason"] = _APPEND_MESSAGE_IDS_AND_STOP, last_stop_reason
        driver = await driver_of(self.session)
        return list(await driver.fetchval(stmt, params) or [])
