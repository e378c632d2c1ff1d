"""Identities: the users or organizations agents and blocks belong to (Letta 0.16.8 behaviour).

An identity is unique per (organization, identifier_key, project_id). PATCH merges (properties by key, agent and
block links are added), PUT on the collection upserts by identifier_key and replaces, and PUT .../properties
replaces the property list.
"""

from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.blocks.schemas import Block
from memlet.db import models as orm
from memlet.db.pagination import Page
from memlet.errors import BadRequestError, ConflictError, NotFoundError
from memlet.identities.repository import IdentityFilters, IdentityRepository
from memlet.identities.schemas import Identity, IdentityCreate, IdentityProperty, IdentityUpdate, IdentityUpsert


def identity_not_found(identity_id: str) -> NotFoundError:
    return NotFoundError("Identity", identity_id)


def duplicate_identity(identifier_key: str, project_id: str | None) -> ConflictError:
    """Letta's 409 for a second identity with the same key in the same project and organization."""
    return ConflictError(
        f"A unique constraint was violated for Identity. An identity with identifier_key='{identifier_key}' "
        f"and project_id='{project_id}' already exists."
    )


def ensure_identity_id(identity_id: str) -> None:
    """Attach/detach routes take a plain string, so the prefix is checked here (400, as Letta)."""
    if not ids.is_valid(identity_id, ids.Prefix.IDENTITY):
        raise BadRequestError(
            f"INVALID_ARGUMENT: Invalid identity ID format: {identity_id}. Expected format: 'identity-<uuid4>'"
        )


def _dump_properties(properties: Sequence[IdentityProperty]) -> list[dict[str, Any]]:
    return [p.model_dump(mode="json") for p in properties]


class IdentityService:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session
        self.identities = IdentityRepository(session)

    async def _row(self, actor: Actor, identity_id: str, *, for_update: bool = False) -> orm.Identity:
        row = await self.identities.find(actor.organization_id, identity_id, for_update=for_update)
        if row is None:
            raise identity_not_found(identity_id)
        return row

    async def _views(self, rows: Sequence[orm.Identity]) -> list[Identity]:
        """Wire identities for a page of rows: one query for agent links, one for block links."""
        row_ids = [r.id for r in rows]
        agents = await self.identities.agent_ids_for(row_ids)
        blocks = await self.identities.block_ids_for(row_ids)
        return [
            Identity(
                id=r.id,
                identifier_key=r.identifier_key,
                name=r.name,
                identity_type=r.identity_type,  # type: ignore[arg-type]
                project_id=r.project_id,
                agent_ids=agents.get(r.id, []),
                block_ids=blocks.get(r.id, []),
                organization_id=r.organization_id,
                properties=[IdentityProperty.model_validate(p) for p in r.properties or []],
            )
            for r in rows
        ]

    async def _view(self, row: orm.Identity) -> Identity:
        return (await self._views([row]))[0]

    async def _check_agents(self, actor: Actor, agent_ids: Sequence[str]) -> None:
        found = await self.identities.existing_agent_ids(actor.organization_id, agent_ids)
        if missing := [a for a in agent_ids if a not in found]:
            raise NotFoundError("Agent", missing[0])

    async def _check_blocks(self, actor: Actor, block_ids: Sequence[str]) -> None:
        found = await self.identities.existing_block_ids(actor.organization_id, block_ids)
        if missing := [b for b in block_ids if b not in found]:
            raise NotFoundError("Block", missing[0], message=f"Block with id '{missing[0]}' not found")

    async def _link(
        self,
        actor: Actor,
        row: orm.Identity,
        agent_ids: list[str] | None,
        block_ids: list[str] | None,
        *,
        replace: bool,
    ) -> None:
        # None leaves a link list alone; a list (even empty) adds, or with `replace` sets, the links.
        if agent_ids is not None:
            await self._check_agents(actor, agent_ids)
            await self.identities.link_agents(row.id, agent_ids, replace=replace)
        if block_ids is not None:
            await self._check_blocks(actor, block_ids)
            await self.identities.link_blocks(row.id, block_ids, replace=replace)

    async def list_page(self, actor: Actor, filters: IdentityFilters, page: Page) -> list[Identity]:
        await self.identities.check_cursors(actor.organization_id, page, orm.Identity)
        return await self._views(await self.identities.list_page(actor.organization_id, filters, page))

    async def count(self, actor: Actor) -> int:
        return await self.identities.count(actor.organization_id)

    async def get(self, actor: Actor, identity_id: str) -> Identity:
        return await self._view(await self._row(actor, identity_id))

    async def create(self, actor: Actor, req: IdentityCreate) -> Identity:
        """Create an identity; 409 when the key is taken in this project, 404 naming an unknown agent or block."""
        org = actor.organization_id
        await self.identities.lock_key(org, req.identifier_key, req.project_id)
        if await self.identities.find_by_key(org, req.identifier_key, req.project_id) is not None:
            raise duplicate_identity(req.identifier_key, req.project_id)
        return await self._insert(actor, req)

    async def upsert(self, actor: Actor, req: IdentityUpsert) -> Identity:
        """Create the identity, or replace the fields, properties and links of the one with this key and project."""
        org = actor.organization_id
        await self.identities.lock_key(org, req.identifier_key, req.project_id)
        row = await self.identities.find_by_key(org, req.identifier_key, req.project_id, for_update=True)
        if row is None:
            return await self._insert(actor, req)
        row.name = req.name
        row.identity_type = req.identity_type
        if req.properties is not None:
            row.properties = _dump_properties(req.properties)
        row.last_updated_by_id = actor.user_id
        await self._link(actor, row, req.agent_ids, req.block_ids, replace=True)
        await self.session.flush()
        return await self._view(row)

    async def _insert(self, actor: Actor, req: IdentityCreate | IdentityUpsert) -> Identity:
        row = orm.Identity(
            id=ids.new_id(ids.Prefix.IDENTITY),
            organization_id=actor.organization_id,
            identifier_key=req.identifier_key,
            name=req.name,
            identity_type=req.identity_type,
            project_id=req.project_id,
            properties=_dump_properties(req.properties or []),
            created_by_id=actor.user_id,
            last_updated_by_id=actor.user_id,
        )
        await self.identities.add(row)
        await self._link(actor, row, req.agent_ids, req.block_ids, replace=True)
        return await self._view(row)

    async def update(self, actor: Actor, identity_id: str, req: IdentityUpdate) -> Identity:
        """Merge a PATCH: given fields change, properties merge by key, listed agents and blocks are added."""
        row = await self._row(actor, identity_id, for_update=True)
        if req.identifier_key is not None and req.identifier_key != row.identifier_key:
            await self.identities.lock_key(actor.organization_id, req.identifier_key, row.project_id)
            if await self.identities.find_by_key(actor.organization_id, req.identifier_key, row.project_id):
                raise duplicate_identity(req.identifier_key, row.project_id)
            row.identifier_key = req.identifier_key
        if req.name is not None:
            row.name = req.name
        if req.identity_type is not None:
            row.identity_type = req.identity_type
        if req.properties is not None:
            merged = {p["key"]: p for p in row.properties or []} | {
                p.key: p.model_dump(mode="json") for p in req.properties
            }
            row.properties = list(merged.values())
        row.last_updated_by_id = actor.user_id
        await self._link(actor, row, req.agent_ids, req.block_ids, replace=False)
        await self.session.flush()
        return await self._view(row)

    async def replace_properties(self, actor: Actor, identity_id: str, properties: list[IdentityProperty]) -> Identity:
        """Replace the whole property list (keys not sent are removed)."""
        row = await self._row(actor, identity_id, for_update=True)
        row.properties = _dump_properties(properties)
        row.last_updated_by_id = actor.user_id
        await self.session.flush()
        return await self._view(row)

    async def delete(self, actor: Actor, identity_id: str) -> None:
        """Delete the identity; its links go with it, the agents and blocks stay."""
        await self._row(actor, identity_id)
        await self.identities.delete(identity_id)

    async def blocks_page(self, actor: Actor, identity_id: str, page: Page) -> list[Block]:
        await self._row(actor, identity_id)
        await self.identities.check_cursors(actor.organization_id, page, orm.Block)
        rows = await self.identities.blocks_page(actor.organization_id, identity_id, page)
        return [Block.model_validate(b) for b in rows]

    async def check_agents_page(self, actor: Actor, identity_id: str, page: Page) -> None:
        """Before its agents are listed: a 404 for an unknown identity, then for a cursor that names no agent."""
        await self._row(actor, identity_id)
        await self.identities.check_cursors(actor.organization_id, page, orm.Agent)

    async def attach_agent(self, actor: Actor, identity_id: str, agent_id: str) -> None:
        """Link an agent (idempotent); 404 naming whichever of the two is unknown."""
        ensure_identity_id(identity_id)
        await self._row(actor, identity_id)
        await self._check_agents(actor, [agent_id])
        await self.identities.link_agents(identity_id, [agent_id], replace=False)

    async def detach_agent(self, actor: Actor, identity_id: str, agent_id: str) -> None:
        ensure_identity_id(identity_id)
        await self._row(actor, identity_id)
        await self._check_agents(actor, [agent_id])
        await self.identities.unlink_agent(identity_id, agent_id)

    async def attach_block(self, actor: Actor, identity_id: str, block_id: str) -> Block:
        """Link a block (idempotent) and return it."""
        ensure_identity_id(identity_id)
        await self._row(actor, identity_id)
        block = await self._block(actor, block_id)
        await self.identities.link_blocks(identity_id, [block_id], replace=False)
        return block

    async def detach_block(self, actor: Actor, identity_id: str, block_id: str) -> Block:
        ensure_identity_id(identity_id)
        await self._row(actor, identity_id)
        block = await self._block(actor, block_id)
        await self.identities.unlink_block(identity_id, block_id)
        return block

    async def _block(self, actor: Actor, block_id: str) -> Block:
        row = await self.identities.find_block(actor.organization_id, block_id)
        if row is None:
            raise NotFoundError("Block", block_id, message=f"Block with id '{block_id}' not found")
        return Block.model_validate(row)
