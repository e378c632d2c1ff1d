"""SQL for blocks and their attachment to agents."""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import ARRAY, Select, String, any_, bindparam, cast, delete, func, or_, select, update
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import ScalarSelect

from memlet.db import models as orm
from memlet.db.base import utcnow
from memlet.db.driver import DriverSQL, driver_of
from memlet.db.pagination import Page, fetch_page, unknown_cursors, without_cursors
from memlet.db.row_shape import RowShape
from memlet.db.sql import escape_like, row_version


def _contains(column: InstrumentedAttribute[Any], text: str) -> ColumnElement[bool]:
    """Case-insensitive substring match; `%` and `_` in the text are literal, not wildcards."""
    return column.ilike(f"%{escape_like(text)}%", escape="\\")


# The agent's blocks in attachment order (every step's load): built once, its cache key memoized.
_OF_AGENT = (
    select(orm.Block)
    .join(orm.BlockAgent, orm.BlockAgent.block_id == orm.Block.id)
    .where(orm.BlockAgent.agent_id == bindparam("p_agent_id"))
    .order_by(orm.BlockAgent.position, orm.Block.created_at)
)
BLOCK_ROWS = RowShape(orm.Block)


def agent_blocks_array(agent_id: ColumnElement[str]) -> ScalarSelect[Any]:
    """The agent's blocks in `of_agent`'s order as one array of `BLOCK_ROWS` rows (NULL without any), to read
    with the agent in one statement."""
    ordered = aggregate_order_by(BLOCK_ROWS.row(), orm.BlockAgent.position, orm.Block.created_at)
    return (
        select(func.array_agg(ordered))
        .join_from(orm.BlockAgent, orm.Block, orm.BlockAgent.block_id == orm.Block.id)
        .where(orm.BlockAgent.agent_id == agent_id)
        .scalar_subquery()
    )


_FOR_AGENTS = DriverSQL(
    select(*BLOCK_ROWS.columns, row_version("blocks"), orm.BlockAgent.agent_id)
    .join_from(orm.BlockAgent, orm.Block, orm.Block.id == orm.BlockAgent.block_id)
    .where(orm.BlockAgent.agent_id == any_(bindparam("agent_ids", type_=ARRAY(String))))
    .order_by(orm.BlockAgent.agent_id, orm.BlockAgent.position, orm.Block.created_at)
)

# A memory edit's write of one block, one statement: its value, label and description (with the updated_at the
# ORM's onupdate would set), and the label copy on its attachment only when that label differs (a rename).
_SAVED_BLOCK = (
    update(orm.Block)
    .where(orm.Block.id == bindparam("block_id"))
    .values(
        value=bindparam("value"),
        label=bindparam("label"),
        description=bindparam("description"),
        updated_at=bindparam("updated_at"),
    )
    .returning(orm.Block.id)
    .cte("saved")
)
_SAVE_FOR_AGENT = DriverSQL(
    update(orm.BlockAgent)
    .where(
        orm.BlockAgent.block_id.in_(select(_SAVED_BLOCK.c.id)),
        orm.BlockAgent.agent_id == bindparam("agent_id"),
        orm.BlockAgent.block_label != bindparam("label"),
    )
    .values(block_label=bindparam("label"))
)


@dataclass(frozen=True)
class BlockFilters:
    """The filters of ``GET /v1/blocks/`` and ``GET /v1/blocks/count`` (Letta's names in comments)."""

    label: str | None = None
    templates_only: bool | None = False  # Letta lists templates *or* ordinary blocks; None (a count) both
    template_name: str | None = None  # the `name` query parameter
    project_id: str | None = None
    identity_id: str | None = None
    identifier_keys: Sequence[str] = ()
    tags: Sequence[str] = ()
    match_all_tags: bool = False
    label_search: str | None = None
    description_search: str | None = None
    value_search: str | None = None
    agents_count_gt: int | None = None
    agents_count_lt: int | None = None
    agents_count_eq: Sequence[int] = field(default_factory=tuple)
    show_hidden: bool = False

    def apply(self, stmt: Select, org_id: str) -> Select:  # type: ignore[type-arg]
        b = orm.Block
        stmt = stmt.where(b.organization_id == org_id)
        if self.templates_only is not None:
            stmt = stmt.where(b.is_template == self.templates_only)
        for column, value in (
            (b.label, self.label),
            (b.template_name, self.template_name),
            (b.project_id, self.project_id),
        ):
            if value:  # as Letta: an empty value (`?project_id=`) filters nothing
                stmt = stmt.where(column == value)
        if self.label_search and not self.label:
            stmt = stmt.where(_contains(b.label, self.label_search))
        if self.description_search:
            stmt = stmt.where(_contains(b.description, self.description_search))
        if self.value_search:
            stmt = stmt.where(_contains(b.value, self.value_search))
        if not self.show_hidden:
            stmt = stmt.where(or_(b.hidden.is_(None), b.hidden.is_(False)))
        if self.tags:
            wanted = cast(list(dict.fromkeys(self.tags)), ARRAY(String))
            stmt = stmt.where(b.tags.has_all(wanted) if self.match_all_tags else b.tags.has_any(wanted))
        if self.identity_id:
            stmt = stmt.where(
                b.id.in_(select(orm.IdentityBlock.block_id).where(orm.IdentityBlock.identity_id == self.identity_id))
            )
        if self.identifier_keys:
            stmt = stmt.where(
                b.id.in_(
                    select(orm.IdentityBlock.block_id)
                    .join(orm.Identity, orm.Identity.id == orm.IdentityBlock.identity_id)
                    .where(orm.Identity.identifier_key.in_(list(self.identifier_keys)))
                )
            )
        return self._apply_agent_counts(stmt)

    def _apply_agent_counts(self, stmt: Select) -> Select:  # type: ignore[type-arg]
        if self.agents_count_gt is None and self.agents_count_lt is None and not self.agents_count_eq:
            return stmt
        attached = (
            select(func.count())
            .select_from(orm.BlockAgent)
            .where(orm.BlockAgent.block_id == orm.Block.id)
            .scalar_subquery()
        )
        if self.agents_count_gt is not None:
            stmt = stmt.where(attached > self.agents_count_gt)
        if self.agents_count_lt is not None:
            stmt = stmt.where(attached < self.agents_count_lt)
        if self.agents_count_eq:
            stmt = stmt.where(attached.in_(list(self.agents_count_eq)))
        return stmt


class BlockRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def add_many(self, rows: Sequence[orm.Block]) -> None:
        self.session.add_all(rows)
        await self.session.flush()

    async def find(self, org_id: str, block_id: str, *, for_update: bool = False) -> orm.Block | None:
        stmt = select(orm.Block).where(orm.Block.id == block_id, orm.Block.organization_id == org_id)
        if for_update:
            stmt = stmt.with_for_update()
        return await self.session.scalar(stmt)

    async def by_ids(self, org_id: str, block_ids: Sequence[str]) -> list[orm.Block]:
        if not block_ids:
            return []
        rows = await self.session.scalars(
            select(orm.Block).where(orm.Block.id.in_(block_ids), orm.Block.organization_id == org_id)
        )
        return list(rows)

    async def in_deployment(self, org_id: str, deployment_id: str) -> list[orm.Block]:
        """The blocks a template deployment created, oldest first (templates and hidden blocks included)."""
        rows = await self.session.scalars(
            select(orm.Block)
            .where(orm.Block.organization_id == org_id, orm.Block.deployment_id == deployment_id)
            .order_by(orm.Block.created_at, orm.Block.id)
        )
        return list(rows)

    async def _known_cursors(self, page: Page, model: type[orm.Block] | type[orm.Agent], org_id: str) -> Page:
        """`page` without a cursor that names none of the organization's rows: Letta's block lists ignore such a
        cursor and list from the start."""
        unknown = await unknown_cursors(self.session, page, model.id, model.organization_id == org_id)
        return without_cursors(page, unknown)

    async def list_page(self, org_id: str, filters: BlockFilters, page: Page) -> list[orm.Block]:
        return await fetch_page(
            self.session,
            filters.apply(select(orm.Block), org_id),
            await self._known_cursors(page, orm.Block, org_id),
            sort_col=orm.Block.created_at,
            id_col=orm.Block.id,
        )

    async def count(self, org_id: str, filters: BlockFilters) -> int:
        stmt = filters.apply(select(func.count()).select_from(orm.Block), org_id)
        return int(await self.session.scalar(stmt) or 0)

    async def delete(self, block_id: str) -> None:
        await self.session.execute(delete(orm.Block).where(orm.Block.id == block_id))

    async def for_agents(
        self, agent_ids: Sequence[str], versions: dict[str, int] | None = None
    ) -> dict[str, list[orm.Block]]:
        """Blocks of many agents in one query, each list in attachment order: detached rows read on the driver (a
        page of agents lists ~100 blocks, which the ORM's loading made ~2x as costly), so they show what the
        session has written, not changes it holds unflushed. `versions` receives each block's row version (its
        `xmin`) by id."""
        result: dict[str, list[orm.Block]] = defaultdict(list)
        if not agent_ids:
            return result
        records = await (await driver_of(self.session)).fetch(_FOR_AGENTS, {"agent_ids": list(agent_ids)})
        for record in records:
            block = BLOCK_ROWS.detached(record)  # the block's version and its agent's id trail its columns
            result[record[-1]].append(block)
            if versions is not None:
                versions[block.id] = record[-2]
        return result

    async def page_for_agent(self, agent_id: str, page: Page) -> list[orm.Block]:
        """One page of an agent's blocks, ordered by creation time."""
        attached = select(orm.BlockAgent.block_id).where(orm.BlockAgent.agent_id == agent_id)
        return await fetch_page(
            self.session,
            select(orm.Block).where(orm.Block.id.in_(attached)),
            page,
            sort_col=orm.Block.created_at,
            id_col=orm.Block.id,
        )

    async def by_label(self, agent_id: str, label: str, *, for_update: bool = False) -> orm.Block | None:
        stmt = (
            select(orm.Block)
            .join(orm.BlockAgent, orm.BlockAgent.block_id == orm.Block.id)
            .where(orm.BlockAgent.agent_id == agent_id, orm.BlockAgent.block_label == label)
        )
        if for_update:
            stmt = stmt.with_for_update(of=orm.Block)
        return await self.session.scalar(stmt)

    async def attach(self, agent_id: str, blocks: Sequence[orm.Block], *, start: int | None = None) -> None:
        """Attach blocks after the agent's existing ones (label uniqueness is enforced by a constraint).

        ``start`` is the first position when the caller knows it (a new agent has none yet: 0).
        """
        if not blocks:
            return
        if start is None:
            start = await self.session.scalar(
                select(func.coalesce(func.max(orm.BlockAgent.position) + 1, 0)).where(
                    orm.BlockAgent.agent_id == agent_id
                )
            )
        self.session.add_all(
            orm.BlockAgent(agent_id=agent_id, block_id=b.id, block_label=b.label, position=(start or 0) + i)
            for i, b in enumerate(blocks)
        )
        await self.session.flush()

    async def detach(self, agent_id: str, block_id: str) -> int:
        result = await self.session.execute(
            delete(orm.BlockAgent).where(orm.BlockAgent.agent_id == agent_id, orm.BlockAgent.block_id == block_id)
        )
        return int(result.rowcount or 0)  # type: ignore[attr-defined]

    async def labels_of(self, agent_id: str) -> set[str]:
        rows = await self.session.scalars(select(orm.BlockAgent.block_label).where(orm.BlockAgent.agent_id == agent_id))
        return set(rows)

    async def attachment(self, agent_id: str, block_id: str) -> orm.BlockAgent | None:
        return await self.session.get(orm.BlockAgent, (agent_id, block_id))

    async def holder_of_label(self, agent_ids: Sequence[str], label: str, *, other_than: str) -> orm.BlockAgent | None:
        """An attachment among `agent_ids` whose label is `label` on a block other than `other_than`."""
        if not agent_ids:
            return None
        return await self.session.scalar(
            select(orm.BlockAgent)
            .where(
                orm.BlockAgent.agent_id.in_(agent_ids),
                orm.BlockAgent.block_label == label,
                orm.BlockAgent.block_id != other_than,
            )
            .limit(1)
        )

    async def relabel(self, block_id: str, label: str) -> None:
        """Copy a block's new label onto its attachments (where per-agent uniqueness is checked)."""
        await self.session.execute(
            update(orm.BlockAgent).where(orm.BlockAgent.block_id == block_id).values(block_label=label)
        )

    async def find_agent(self, org_id: str, agent_id: str) -> orm.Agent | None:
        return await self.session.scalar(
            select(orm.Agent).where(orm.Agent.id == agent_id, orm.Agent.organization_id == org_id)
        )

    async def agents_of(self, block_id: str) -> list[orm.Agent]:
        """Every agent the block is attached to, in one query."""
        rows = await self.session.scalars(
            select(orm.Agent)
            .join(orm.BlockAgent, orm.BlockAgent.agent_id == orm.Agent.id)
            .where(orm.BlockAgent.block_id == block_id)
            .order_by(orm.Agent.created_at, orm.Agent.id)
        )
        return list(rows)

    async def agents_page(self, org_id: str, block_id: str, page: Page) -> list[orm.Agent]:
        """One page of the agents a block is attached to, ordered by creation time."""
        attached = select(orm.BlockAgent.agent_id).where(orm.BlockAgent.block_id == block_id)
        return await fetch_page(
            self.session,
            select(orm.Agent).where(orm.Agent.organization_id == org_id, orm.Agent.id.in_(attached)),
            await self._known_cursors(page, orm.Agent, org_id),
            sort_col=orm.Agent.created_at,
            id_col=orm.Agent.id,
        )

    async def of_agent(self, agent_id: str) -> list[orm.Block]:
        """The agent's blocks in attachment order."""
        rows = await self.session.scalars(_OF_AGENT, {"p_agent_id": agent_id})
        return list(rows)

    async def save_for_agent(self, agent_id: str, block: orm.Block) -> None:
        """Write a block's value, label and description (and the label copy on its attachment), one statement."""
        params = {
            "block_id": block.id,
            "agent_id": agent_id,
            "value": block.value,
            "label": block.label,
            "description": block.description,
            "updated_at": utcnow(),
        }
        await (await driver_of(self.session)).fetch(_SAVE_FOR_AGENT, params)

    async def attach_new(self, agent_id: str, block: orm.Block, position: int) -> None:
        """Insert a new block and attach it to the agent at `position`."""
        self.session.add(block)
        await self.session.flush()
        self.session.add(
            orm.BlockAgent(agent_id=agent_id, block_id=block.id, block_label=block.label, position=position)
        )
        await self.session.flush()
