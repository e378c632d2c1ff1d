"""Archives: CRUD, attachment to agents, and each agent's default archive.

As in Letta 0.16.8 an agent gets a default archive ("<name>'s Archive", owned by the agent) the first time it
stores a passage. Unlike Letta, an agent may hold several archives: searches cover all of them and inserts go to
its own (else the one attached first), instead of failing with "multiple archives, which is not yet supported".
"""

from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.archives.repository import ArchiveRepository
from memlet.archives.schemas import ArchiveCreateRequest, ArchiveUpdateRequest
from memlet.db import models as orm
from memlet.db.pagination import Page, check_cursors, unknown_cursors, without_cursors
from memlet.errors import NotFoundError
from memlet.providers.catalog import ModelCatalog

DEFAULT_ARCHIVE_DESCRIPTION = "Default archive created automatically"


def archive_not_found(archive_id: str) -> NotFoundError:
    return NotFoundError("Archive", archive_id, message=f"Archive with id '{archive_id}' not found")


class ArchiveService:
    def __init__(self, session: AsyncSession, catalog: ModelCatalog | None = None) -> None:
        self.session = session
        self.catalog = catalog
        self.archives = ArchiveRepository(session)

    async def get(self, actor: Actor, archive_id: str) -> orm.Archive:
        row = await self.archives.find(actor.organization_id, archive_id)
        if row is None:
            raise archive_not_found(archive_id)
        return row

    async def agent(self, actor: Actor, agent_id: str, *, for_update: bool = False) -> orm.Agent:
        agent = await self.archives.find_agent(actor.organization_id, agent_id, for_update=for_update)
        if agent is None:
            raise NotFoundError("Agent", agent_id)
        return agent

    async def _embedding_config(self, actor: Actor, req: ArchiveCreateRequest) -> dict[str, Any] | None:
        if req.embedding_config is not None:
            config = req.embedding_config.model_dump(mode="json")
            if self.catalog is not None:
                await self.catalog.check_endpoint(config, "embedding_endpoint", "embedding_config.embedding_endpoint")
            return config
        if self.catalog is None:
            return None
        # Without either, Letta uses the server's default embedding handle, or none (text search only).
        handle = req.embedding or self.catalog.default_embedding_handle
        return await self.catalog.resolve_embedding(self.session, actor.organization_id, handle) if handle else None

    async def create(self, actor: Actor, req: ArchiveCreateRequest) -> orm.Archive:
        return await self._new(actor, req.name, req.description, await self._embedding_config(actor, req))

    async def _new(
        self, actor: Actor, name: str, description: str | None, embedding_config: dict[str, Any] | None
    ) -> orm.Archive:
        row = orm.Archive(
            id=ids.new_id(ids.Prefix.ARCHIVE),
            organization_id=actor.organization_id,
            name=name,
            description=description,
            vector_db_provider="native",
            embedding_config=embedding_config,
            created_by_id=actor.user_id,
            last_updated_by_id=actor.user_id,
        )
        await self.archives.add(row)
        return row

    async def list_page(self, actor: Actor, page: Page, *, name: str | None, agent_id: str | None) -> list[orm.Archive]:
        org = orm.Archive.organization_id == actor.organization_id
        await check_cursors(self.session, page, orm.Archive.id, "Archive", org)
        return await self.archives.list_page(actor.organization_id, page, name=name, agent_id=agent_id)

    async def modify(self, actor: Actor, archive_id: str, req: ArchiveUpdateRequest) -> orm.Archive:
        row = await self.get(actor, archive_id)
        for field, value in req.model_dump(exclude_unset=True, exclude_none=True).items():
            setattr(row, field, value)
        row.last_updated_by_id, row.updated_at = actor.user_id, datetime.now(UTC)
        await self.session.flush()
        return row

    async def delete(self, actor: Actor, archive_id: str) -> list[str]:
        """Delete the archive and its passages; returns the ids of the agents that held it."""
        await self.get(actor, archive_id)
        agent_ids = await self.archives.agent_ids([archive_id])
        await self.archives.delete(archive_id)
        return agent_ids

    async def attach(self, actor: Actor, agent_id: str, archive_id: str) -> None:
        await self.agent(actor, agent_id)
        await self.get(actor, archive_id)
        await self.archives.attach(agent_id, archive_id)

    async def detach(self, actor: Actor, agent_id: str, archive_id: str) -> None:
        await self.agent(actor, agent_id)
        await self.get(actor, archive_id)
        await self.archives.detach(agent_id, archive_id)

    async def agents_page(self, actor: Actor, archive_id: str, page: Page) -> list[orm.Agent]:
        await self.get(actor, archive_id)
        # Letta ignores a cursor that names no agent here (the whole list, not an empty page).
        org = orm.Agent.organization_id == actor.organization_id
        page = without_cursors(page, await unknown_cursors(self.session, page, orm.Agent.id, org))
        return await self.archives.agents_page(actor.organization_id, archive_id, page)

    async def latest_embedding_config(self, actor: Actor) -> dict[str, Any] | None:
        """The embedding_config of the organization's newest archive that has one (org-wide search)."""
        return await self.archives.latest_embedding_config(actor.organization_id)

    async def of_agent(self, agent_id: str) -> list[orm.Archive]:
        return await self.archives.of_agent(agent_id)

    async def default_for(self, actor: Actor, agent: orm.Agent) -> orm.Archive:
        """The archive the agent's inserts go to, created (and owned by the agent) on first use."""
        # Lock the agent row so two first inserts cannot both create a default archive.
        await self.agent(actor, agent.id, for_update=True)
        existing = await self.archives.of_agent(agent.id)
        if existing:
            return existing[0]
        row = await self._new(actor, f"{agent.name}'s Archive", DEFAULT_ARCHIVE_DESCRIPTION, agent.embedding_config)
        await self.archives.attach(agent.id, row.id, is_owner=True)
        return row
