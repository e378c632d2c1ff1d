"""SQL for groups, their participants (``groups_agents``, ordered by ``position``) and shared blocks
(``groups_blocks``).

The sleeptime code builds on these functions too: it creates its group here, reads the groups an agent manages, and
moves ``turns_counter`` / ``last_processed_message_id`` with `update`.
"""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import BindParameter, Select, delete, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from memlet.db import models as orm
from memlet.db.base import utcnow
from memlet.db.pagination import Page, fetch_page

G = orm.Group


@dataclass(frozen=True)
class GroupFilters:
    """The filters of ``GET /v1/groups/`` and ``GET /v1/agents/{id}/groups``."""

    manager_type: str | None = None
    project_id: str | None = None
    show_hidden: bool = False
    participant_id: str | None = None  # only groups this agent takes part in

    def apply(self, stmt: Select[Any], org_id: str) -> Select[Any]:
        stmt = stmt.where(G.organization_id == org_id)
        if self.manager_type is not None:
            stmt = stmt.where(G.manager_type == self.manager_type)
        if self.project_id is not None:
            stmt = stmt.where(G.project_id == self.project_id)
        if not self.show_hidden:
            stmt = stmt.where(or_(G.hidden.is_(None), G.hidden.is_(False)))
        if self.participant_id is not None:
            stmt = stmt.where(
                G.id.in_(select(orm.GroupAgent.group_id).where(orm.GroupAgent.agent_id == self.participant_id))
            )
        return stmt


class GroupRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def create(self, row: orm.Group, agent_ids: Sequence[str], block_ids: Sequence[str] = ()) -> orm.Group:
        """Insert a group with its participants in the given order and its shared blocks."""
        self.session.add(row)
        await self.session.flush()
        await self.set_agents(row.id, agent_ids)
        await self.set_blocks(row.id, block_ids)
        return row

    async def find(self, org_id: str, group_id: str, *, for_update: bool = False) -> orm.Group | None:
        stmt = select(G).where(G.id == group_id, G.organization_id == org_id)
        if for_update:
            stmt = stmt.with_for_update()
        return await self.session.scalar(stmt)

    async def update(self, group_id: str, **fields: Any) -> None:
        """Write column values (``turns_counter=0``, ``description="..."``) and touch ``updated_at``."""
        if not fields:
            return
        await self.session.execute(
            update(G)
            .where(G.id == group_id)
            .values(**fields, updated_at=utcnow())
            .execution_options(synchronize_session="fetch")
        )

    async def delete(self, group_id: str) -> None:
        """Delete the group; its participant and block links go with it (ON DELETE CASCADE)."""
        await self.session.execute(delete(G).where(G.id == group_id))

    async def list_page(self, org_id: str, filters: GroupFilters, page: Page) -> list[orm.Group]:
        return await fetch_page(
            self.session, filters.apply(select(G), org_id), page, sort_col=G.created_at, id_col=G.id
        )

    async def count(self, org_id: str, filters: GroupFilters) -> int:
        stmt = filters.apply(select(func.count()).select_from(G), org_id)
        return int(await self.session.scalar(stmt) or 0)

    async def agent_ids(self, group_id: str) -> list[str]:
        """The participants of a group, in their order."""
        return (await self.agent_ids_for([group_id])).get(group_id, [])

    async def agent_ids_for(self, group_ids: Sequence[str]) -> dict[str, list[str]]:
        """The participants of many groups in one query, each list in order."""
        return await self._by_group(
            group_ids, orm.GroupAgent.group_id, orm.GroupAgent.agent_id, orm.GroupAgent.position
        )

    async def shared_block_ids(self, group_id: str) -> list[str]:
        return (await self.shared_block_ids_for([group_id])).get(group_id, [])

    async def shared_block_ids_for(self, group_ids: Sequence[str]) -> dict[str, list[str]]:
        return await self._by_group(
            group_ids, orm.GroupBlock.group_id, orm.GroupBlock.block_id, orm.GroupBlock.block_id
        )

    async def set_agents(self, group_id: str, agent_ids: Sequence[str]) -> None:
        """Replace the participants with ``agent_ids``, in that order (a repeated id keeps its first place)."""
        await self.session.execute(delete(orm.GroupAgent).where(orm.GroupAgent.group_id == group_id))
        self.session.add_all(
            orm.GroupAgent(group_id=group_id, agent_id=agent_id, position=i)
            for i, agent_id in enumerate(dict.fromkeys(agent_ids))
        )
        await self.session.flush()

    async def set_blocks(self, group_id: str, block_ids: Sequence[str]) -> None:
        """Replace the shared blocks with ``block_ids``."""
        await self.session.execute(delete(orm.GroupBlock).where(orm.GroupBlock.group_id == group_id))
        self.session.add_all(orm.GroupBlock(group_id=group_id, block_id=b) for b in dict.fromkeys(block_ids))
        await self.session.flush()

    async def add_block(self, group_id: str, block_id: str) -> None:
        """Share a block with the group; sharing it again is a no-op."""
        if await self.session.get(orm.GroupBlock, (group_id, block_id)) is None:
            self.session.add(orm.GroupBlock(group_id=group_id, block_id=block_id))
            await self.session.flush()

    async def remove_block(self, group_id: str, block_id: str) -> int:
        result = await self.session.execute(
            delete(orm.GroupBlock).where(orm.GroupBlock.group_id == group_id, orm.GroupBlock.block_id == block_id)
        )
        return int(result.rowcount or 0)  # type: ignore[attr-defined]

    async def in_deployment(self, org_id: str, deployment_id: str) -> list[orm.Group]:
        """The groups a template deployment created, oldest first."""
        rows = await self.session.scalars(
            select(G).where(G.organization_id == org_id, G.deployment_id == deployment_id).order_by(G.created_at, G.id)
        )
        return list(rows)

    async def groups_of_agent(self, agent_id: str) -> list[orm.Group]:
        """Every group the agent takes part in (not those it only manages), oldest first."""
        rows = await self.session.scalars(
            select(G)
            .join(orm.GroupAgent, orm.GroupAgent.group_id == G.id)
            .where(orm.GroupAgent.agent_id == agent_id)
            .order_by(G.created_at, G.id)
        )
        return list(rows)

    @staticmethod
    def active_sleeptime_group() -> Any:
        """The oldest sleeptime group the outer query's agent manages while its ``enable_sleeptime`` is on."""
        return (
            select(G.id)
            .where(
                G.manager_agent_id == orm.Agent.id,
                G.manager_type == "sleeptime",
                orm.Agent.enable_sleeptime.is_(True),
            )
            .order_by(G.created_at, G.id)
            .limit(1)
            .scalar_subquery()
        )

    async def active_sleeptime_group_id(self, org_id: str, agent_id: str) -> str | None:
        """The oldest sleeptime group `agent_id` manages while its ``enable_sleeptime`` is on (one statement)."""
        found = await self.agent_type_and_sleeptime_group(org_id, agent_id)
        return found[1] if found is not None else None

    async def agent_type_and_sleeptime_group(self, org_id: str, agent_id: str) -> tuple[str, str | None] | None:
        """The agent's type and its active sleeptime group id in one statement (what a send needs to know before
        it starts); None for an unknown agent."""
        row = (await self.session.execute(self.agent_type_and_sleeptime_group_query(org_id, agent_id))).first()
        return (row[0], row[1]) if row is not None else None

    @classmethod
    def agent_type_and_sleeptime_group_query(
        cls, org_id: str | BindParameter[str], agent_id: str | BindParameter[str]
    ) -> Select[Any]:
        """The select behind `agent_type_and_sleeptime_group`, for a statement that checks the agent while it writes
        (`RunRepository.add_for_agent`); the ids may be bind parameters (a statement built once)."""
        return select(orm.Agent.agent_type, cls.active_sleeptime_group()).where(
            orm.Agent.id == agent_id, orm.Agent.organization_id == org_id
        )

    async def managed_by(self, agent_id: str, manager_type: str | None = None) -> list[orm.Group]:
        """The groups whose manager is the agent, oldest first, optionally of one type."""
        stmt = select(G).where(G.manager_agent_id == agent_id)
        if manager_type is not None:
            stmt = stmt.where(G.manager_type == manager_type)
        return list(await self.session.scalars(stmt.order_by(G.created_at, G.id)))

    async def managed_by_any(self, agent_ids: Sequence[str]) -> dict[str, orm.Group]:
        """For each of the agents that manages a group, its oldest such group: one statement for a page of agents."""
        if not agent_ids:
            return {}
        rows = await self.session.scalars(
            select(G)
            .where(G.manager_agent_id.in_(list(agent_ids)))
            .order_by(G.manager_agent_id, G.created_at, G.id)
            .distinct(G.manager_agent_id)
        )
        return {row.manager_agent_id: row for row in rows if row.manager_agent_id is not None}

    async def _by_group(
        self,
        group_ids: Sequence[str],
        group_col: InstrumentedAttribute[str],
        value_col: InstrumentedAttribute[str],
        order_col: InstrumentedAttribute[Any],
    ) -> dict[str, list[str]]:
        """A link table's values for many groups in one query, each group's list ordered by `order_col`."""
        result: dict[str, list[str]] = defaultdict(list)
        if not group_ids:
            return result
        rows = await self.session.execute(
            select(group_col, value_col).where(group_col.in_(list(group_ids))).order_by(group_col, order_col)
        )
        for group_id, value in rows:
            result[group_id].append(value)
        return result
