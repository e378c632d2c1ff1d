"""SQL for identities and their links to agents and blocks."""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, delete, func, select, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from memlet.db import models as orm
from memlet.db.locks import lock_key
from memlet.db.pagination import Page, check_cursors, fetch_page
from memlet.db.sql import escape_like


@dataclass(frozen=True)
class IdentityFilters:
    """The filters of ``GET /v1/identities/``; ``name`` matches a case-insensitive substring, as in Letta."""

    name: str | None = None
    project_id: str | None = None
    identifier_key: str | None = None
    identity_type: str | None = None

    def apply(self, stmt: Select[Any], org_id: str) -> Select[Any]:
        i = orm.Identity
        stmt = stmt.where(i.organization_id == org_id)
        if self.name:
            stmt = stmt.where(i.name.ilike(f"%{escape_like(self.name)}%", escape="\\"))
        for column, value in (
            (i.project_id, self.project_id),
            (i.identifier_key, self.identifier_key),
            (i.identity_type, self.identity_type),
        ):
            if value:
                stmt = stmt.where(column == value)
        return stmt


class IdentityRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def add(self, row: orm.Identity) -> None:
        self.session.add(row)
        await self.session.flush()

    async def find(self, org_id: str, identity_id: str, *, for_update: bool = False) -> orm.Identity | None:
        stmt = select(orm.Identity).where(orm.Identity.id == identity_id, orm.Identity.organization_id == org_id)
        if for_update:
            stmt = stmt.with_for_update()
        return await self.session.scalar(stmt)

    async def lock_key(self, org_id: str, identifier_key: str, project_id: str | None) -> None:
        """Serialize writers of one (org, key, project) until the transaction ends.

        The table's unique constraint treats NULL project ids as distinct, so it cannot stop two identities with
        the same key and no project; checking under this lock can.
        """
        key = lock_key(f"identity\x00{org_id}\x00{identifier_key}\x00{project_id or ''}")
        await self.session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": key})

    async def find_by_key(
        self, org_id: str, identifier_key: str, project_id: str | None, *, for_update: bool = False
    ) -> orm.Identity | None:
        stmt = select(orm.Identity).where(
            orm.Identity.organization_id == org_id,
            orm.Identity.identifier_key == identifier_key,
            orm.Identity.project_id.is_not_distinct_from(project_id),
        )
        if for_update:
            stmt = stmt.with_for_update()
        return await self.session.scalar(stmt.limit(1))

    async def list_page(self, org_id: str, filters: IdentityFilters, page: Page) -> list[orm.Identity]:
        return await fetch_page(
            self.session,
            filters.apply(select(orm.Identity), org_id),
            page,
            sort_col=orm.Identity.created_at,
            id_col=orm.Identity.id,
        )

    async def check_cursors(
        self, org_id: str, page: Page, model: type[orm.Identity] | type[orm.Agent] | type[orm.Block]
    ) -> None:
        """Letta's identity lists look each cursor up before listing (``before`` first), and one that names none of
        the organization's ``model`` rows is its 404 ``No <Model> found with id <id>`` (its block lists ignore such
        a cursor instead)."""
        await check_cursors(self.session, page, model.id, model.__name__, model.organization_id == org_id)

    async def count(self, org_id: str) -> int:
        stmt = select(func.count()).select_from(orm.Identity).where(orm.Identity.organization_id == org_id)
        return int(await self.session.scalar(stmt) or 0)

    async def delete(self, identity_id: str) -> None:
        await self.session.execute(delete(orm.Identity).where(orm.Identity.id == identity_id))

    async def agent_ids_for(self, identity_ids: Sequence[str]) -> dict[str, list[str]]:
        """Agent ids linked to each identity of a page, in one query."""
        return await self._linked(orm.IdentityAgent.identity_id, orm.IdentityAgent.agent_id, identity_ids)

    async def block_ids_for(self, identity_ids: Sequence[str]) -> dict[str, list[str]]:
        """Block ids linked to each identity of a page, in one query."""
        return await self._linked(orm.IdentityBlock.identity_id, orm.IdentityBlock.block_id, identity_ids)

    async def _linked(
        self, owner: InstrumentedAttribute[str], target: InstrumentedAttribute[str], identity_ids: Sequence[str]
    ) -> dict[str, list[str]]:
        result: dict[str, list[str]] = defaultdict(list)
        if identity_ids:
            rows = await self.session.execute(
                select(owner, target).where(owner.in_(identity_ids)).order_by(owner, target)
            )
            for identity_id, linked_id in rows:
                result[identity_id].append(linked_id)
        return result

    async def existing_agent_ids(self, org_id: str, agent_ids: Sequence[str]) -> set[str]:
        if not agent_ids:
            return set()
        rows = await self.session.scalars(
            select(orm.Agent.id).where(orm.Agent.id.in_(agent_ids), orm.Agent.organization_id == org_id)
        )
        return set(rows)

    async def existing_block_ids(self, org_id: str, block_ids: Sequence[str]) -> set[str]:
        if not block_ids:
            return set()
        rows = await self.session.scalars(
            select(orm.Block.id).where(orm.Block.id.in_(block_ids), orm.Block.organization_id == org_id)
        )
        return set(rows)

    async def link_agents(self, identity_id: str, agent_ids: Sequence[str], *, replace: bool) -> None:
        """Add links to agents; with ``replace`` the identity ends up linked to exactly these agents."""
        link = orm.IdentityAgent
        if replace:
            await self.session.execute(delete(link).where(link.identity_id == identity_id))
        if agent_ids:
            values = [{"identity_id": identity_id, "agent_id": a} for a in dict.fromkeys(agent_ids)]
            await self.session.execute(insert(link).values(values).on_conflict_do_nothing())

    async def link_blocks(self, identity_id: str, block_ids: Sequence[str], *, replace: bool) -> None:
        """Add links to blocks; with ``replace`` the identity ends up linked to exactly these blocks."""
        link = orm.IdentityBlock
        if replace:
            await self.session.execute(delete(link).where(link.identity_id == identity_id))
        if block_ids:
            values = [{"identity_id": identity_id, "block_id": b} for b in dict.fromkeys(block_ids)]
            await self.session.execute(insert(link).values(values).on_conflict_do_nothing())

    async def unlink_agent(self, identity_id: str, agent_id: str) -> None:
        link = orm.IdentityAgent
        await self.session.execute(delete(link).where(link.identity_id == identity_id, link.agent_id == agent_id))

    async def unlink_block(self, identity_id: str, block_id: str) -> None:
        link = orm.IdentityBlock
        await self.session.execute(delete(link).where(link.identity_id == identity_id, link.block_id == block_id))

    async def find_block(self, org_id: str, block_id: str) -> orm.Block | None:
        return await self.session.scalar(
            select(orm.Block).where(orm.Block.id == block_id, orm.Block.organization_id == org_id)
        )

    async def blocks_page(self, org_id: str, identity_id: str, page: Page) -> list[orm.Block]:
        """One page of the blocks linked to an identity, ordered by creation time."""
        linked = select(orm.IdentityBlock.block_id).where(orm.IdentityBlock.identity_id == identity_id)
        base: Select[Any] = select(orm.Block).where(orm.Block.organization_id == org_id, orm.Block.id.in_(linked))
        return await fetch_page(self.session, base, page, sort_col=orm.Block.created_at, id_col=orm.Block.id)
