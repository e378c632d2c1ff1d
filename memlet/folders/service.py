"""Folders: CRUD, org-wide file statistics, and attaching folders to agents.

Attaching a folder gives the agent the file tools (`open_files`, `grep_files`, `semantic_search_files`) and
every file of the folder as a file block (opened up to the agent's `max_files_open`); detaching removes the file
blocks, and the file tools once no folder is left. Either way the agent's system prompt is recompiled, so the
`<directories>` section the model reads is current.
"""

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.db import models as orm
from memlet.db.pagination import Page, check_cursors
from memlet.errors import BadRequestError, ConflictError, NotFoundError
from memlet.folders.agent_files import AgentFiles
from memlet.folders.chunking import DEFAULT_CHUNK_SIZE
from memlet.folders.file_agent_repository import FileAgentRepository
from memlet.folders.file_repository import FileRepository
from memlet.folders.repository import FolderRepository
from memlet.folders.schemas import FileStats, OrganizationSourcesStats, SourceCreate, SourceStats, SourceUpdate
from memlet.passages.repository import PassageRepository, PassageScope
from memlet.prompt.rebuild import PromptRebuilder
from memlet.providers.catalog import ModelCatalog
from memlet.tools.base_tools import FILE_TOOL_NAMES
from memlet.tools.repository import ToolRepository


def folder_not_found(folder_id: str) -> NotFoundError:
    return NotFoundError("Folder", folder_id, message=f"Folder with id '{folder_id}' not found")


class FolderService:
    def __init__(
        self, session: AsyncSession, rebuild_prompts: PromptRebuilder, catalog: ModelCatalog | None = None
    ) -> None:
        self.session = session
        self.rebuild_prompts = rebuild_prompts
        self.catalog = catalog
        self.folders = FolderRepository(session)
        self.files = FileRepository(session)
        self.file_agents = FileAgentRepository(session)

    async def get(self, actor: Actor, folder_id: str) -> orm.Source:
        row = await self.folders.find(actor.organization_id, folder_id)
        if row is None:
            raise folder_not_found(folder_id)
        return row

    async def agent(self, actor: Actor, agent_id: str) -> orm.Agent:
        agent = await self.folders.find_agent(actor.organization_id, agent_id)
        if agent is None:
            raise NotFoundError("Agent", agent_id)
        return agent

    async def id_by_name(self, actor: Actor, name: str) -> str:
        row = await self.folders.find_by_name(actor.organization_id, name)
        if row is None:
            raise NotFoundError("Folder", message=f"Folder with name '{name}' not found")
        return row.id

    async def _check_name_free(self, actor: Actor, name: str) -> None:
        if await self.folders.find_by_name(actor.organization_id, name) is not None:
            raise ConflictError(f"Folder with name '{name}' already exists")

    async def _embedding_config(self, actor: Actor, req: SourceCreate) -> dict[str, Any]:
        if req.embedding_config is not None:
            config = req.embedding_config.model_dump(mode="json")
            await self._check_endpoint(config)
        elif self.catalog is not None and (handle := req.embedding or self.catalog.default_embedding_handle):
            # Without either, Letta gives a folder the server's default embedding handle, as it does an agent.
            config = await self.catalog.resolve_embedding(self.session, actor.organization_id, handle)
        else:
            raise BadRequestError("INVALID_ARGUMENT: Must specify either embedding or embedding_config in request")
        if req.embedding_chunk_size is not None:
            config["embedding_chunk_size"] = req.embedding_chunk_size
        config.setdefault("embedding_chunk_size", DEFAULT_CHUNK_SIZE)
        return config

    async def _check_endpoint(self, config: dict[str, Any] | None) -> None:
        if self.catalog is not None:
            await self.catalog.check_endpoint(config, "embedding_endpoint", "embedding_config.embedding_endpoint")

    async def create(self, actor: Actor, req: SourceCreate) -> orm.Source:
        await self._check_name_free(actor, req.name)
        row = orm.Source(
            id=ids.new_id(ids.Prefix.SOURCE),
            organization_id=actor.organization_id,
            name=req.name,
            description=req.description,
            instructions=req.instructions,
            metadata_=req.metadata,
            embedding_config=await self._embedding_config(actor, req),
            vector_db_provider="native",
            created_by_id=actor.user_id,
            last_updated_by_id=actor.user_id,
        )
        await self.folders.add(row)
        return row

    async def list_page(self, actor: Actor, page: Page, *, name: str | None) -> list[orm.Source]:
        await check_cursors(
            self.session, page, orm.Source.id, "Source", orm.Source.organization_id == actor.organization_id
        )
        return await self.folders.list_page(actor.organization_id, page, name=name)

    async def count(self, actor: Actor) -> int:
        return await self.folders.count(actor.organization_id)

    async def modify(self, actor: Actor, folder_id: str, req: SourceUpdate) -> orm.Source:
        row = await self.get(actor, folder_id)
        changes = req.model_dump(exclude_unset=True, exclude_none=True, mode="json")
        if "name" in changes and changes["name"] != row.name:
            await self._check_name_free(actor, changes["name"])
        await self._check_endpoint(changes.get("embedding_config"))
        for field, value in changes.items():
            setattr(row, "metadata_" if field == "metadata" else field, value)
        row.last_updated_by_id, row.updated_at = actor.user_id, datetime.now(UTC)
        await self.session.flush()
        await self._recompile(await self.folders.agent_ids(folder_id))
        return row

    async def delete(self, actor: Actor, folder_id: str) -> None:
        """Delete the folder, its files, their passages and file blocks; recompile the agents that had it."""
        await self.get(actor, folder_id)
        await self.files.lock_files_of(folder_id)  # first, as the file processor takes a file before the rest
        agent_ids = sorted(await self.folders.agent_ids(folder_id))
        for agent_id in agent_ids:
            await self._detach_rows(agent_id, folder_id)
        await self.folders.delete(folder_id)
        await self.session.flush()
        await self._recompile(agent_ids)

    async def metadata(self, actor: Actor, *, detailed: bool) -> OrganizationSourcesStats:
        totals = await self.folders.file_totals(actor.organization_id)
        stats = OrganizationSourcesStats(
            total_sources=len(totals), total_files=sum(t[2] for t in totals), total_size=sum(t[3] for t in totals)
        )
        if detailed:
            files = await self.folders.file_sizes(actor.organization_id)
            stats.sources = [
                SourceStats(
                    source_id=sid,
                    source_name=name,
                    file_count=count,
                    total_size=size,
                    files=[FileStats(file_id=f[1], file_name=f[2], file_size=f[3]) for f in files if f[0] == sid],
                )
                for sid, name, count, size in totals
            ]
        return stats

    async def agent_ids_page(self, actor: Actor, folder_id: str, page: Page) -> list[str]:
        await self.get(actor, folder_id)
        # As in Letta, a cursor must name an existing agent (attached or not).
        await check_cursors(
            self.session, page, orm.Agent.id, "Agent", orm.Agent.organization_id == actor.organization_id
        )
        return await self.folders.agent_ids_page(actor.organization_id, folder_id, page)

    async def of_agent_page(self, actor: Actor, agent_id: str, page: Page) -> list[orm.Source]:
        await self.agent(actor, agent_id)
        return await self.folders.of_agent_page(agent_id, page)

    async def passages_page(self, actor: Actor, folder_id: str, page: Page) -> list[orm.Passage]:
        await self.get(actor, folder_id)
        scope = PassageScope(source_ids=[folder_id])
        return await PassageRepository(self.session).list_page(actor.organization_id, scope, page)

    async def attach(
        self, actor: Actor, agent_id: str, folder_id: str, *, file_tools: bool = True, recompile: bool = True
    ) -> None:
        """Attach a folder with its files, and (unless `file_tools` is false) the file tools; `recompile=False`
        leaves the agent's stored system prompt as it is (an agent-file import keeps the file's)."""
        agent = await self.agent(actor, agent_id)
        await self.get(actor, folder_id)
        await self.folders.attach(agent_id, folder_id)
        if file_tools:
            tools = ToolRepository(self.session)
            await tools.attach(agent_id, [t.id for t in await tools.by_names(actor.organization_id, FILE_TOOL_NAMES)])
        files = await self.files.of_source(folder_id)
        if files:
            await AgentFiles(self.session).attach(agent, files, await self.files.texts([f.id for f in files]))
        if recompile:
            await self._recompile([agent_id])
        else:
            await self.session.flush()

    async def detach(self, actor: Actor, agent_id: str, folder_id: str) -> None:
        await self.agent(actor, agent_id)
        await self.get(actor, folder_id)
        await self._detach_rows(agent_id, folder_id)
        if not await self.folders.of_agent(agent_id):
            tools = ToolRepository(self.session)
            for tool in await tools.by_names(actor.organization_id, FILE_TOOL_NAMES):
                await tools.detach(agent_id, tool.id)
        await self.session.flush()
        await self._recompile([agent_id])

    async def _detach_rows(self, agent_id: str, folder_id: str) -> None:
        await self.file_agents.remove_source(agent_id, folder_id)
        await self.folders.detach(agent_id, folder_id)

    async def _recompile(self, agent_ids: Sequence[str]) -> None:
        await self.session.flush()
        agents = [await self.session.get(orm.Agent, agent_id, with_for_update=True) for agent_id in agent_ids]
        await self.rebuild_prompts(self.session, [agent for agent in agents if agent is not None])
