"""The files of one agent through the REST API: list them, open one whole, close one or all.

Every change recompiles the agent's system prompt, so its `<directories>` section matches what is open.
"""

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.actor import Actor
from memlet.db import models as orm
from memlet.db.pagination import Page
from memlet.errors import NotFoundError
from memlet.folders import line_view
from memlet.folders.agent_files import AgentFiles, file_limits
from memlet.folders.file_agent_repository import FileAgentRepository
from memlet.folders.file_repository import FileRepository
from memlet.folders.file_schemas import AgentFileAttachment, PaginatedAgentFiles
from memlet.folders.repository import FolderRepository
from memlet.prompt.rebuild import PromptRebuilder


class AgentFileService:
    def __init__(self, session: AsyncSession, rebuild_prompts: PromptRebuilder) -> None:
        self.session = session
        self.rebuild_prompts = rebuild_prompts
        self.rows = FileAgentRepository(session)
        self.files = FileRepository(session)

    async def _agent(self, actor: Actor, agent_id: str) -> orm.Agent:
        agent = await FolderRepository(self.session).find_agent(actor.organization_id, agent_id, for_update=True)
        if agent is None:
            raise NotFoundError("Agent", agent_id)
        return agent

    async def list_page(self, actor: Actor, agent_id: str, page: Page, *, is_open: bool | None) -> PaginatedAgentFiles:
        await self._agent(actor, agent_id)
        wanted = page.limit or 100
        rows = await self.rows.list_page(
            agent_id, Page(page.before, page.after, wanted + 1, page.order), is_open=is_open
        )
        has_more = len(rows) > wanted
        rows = rows[:wanted]
        folders = {f.id: f.name for f in await FolderRepository(self.session).of_agent(agent_id)}
        files = [
            AgentFileAttachment(
                id=r.id,
                file_id=r.file_id,
                file_name=r.file_name,
                folder_id=r.source_id,
                folder_name=folders.get(r.source_id, "Unknown"),
                is_open=r.is_open,
                last_accessed_at=r.last_accessed_at,
                visible_content=r.visible_content,
                start_line=r.start_line,
                end_line=r.end_line,
            )
            for r in rows
        ]
        return PaginatedAgentFiles(files=files, next_cursor=rows[-1].id if rows else None, has_more=has_more)

    async def open(self, actor: Actor, agent_id: str, file_id: str) -> list[str]:
        """Open the whole file (cut to the agent's window limit); the names closed to make room."""
        agent = await self._agent(actor, agent_id)
        meta = await self.files.find(actor.organization_id, file_id)
        if meta is None:
            raise NotFoundError("File", file_id, message=f"File with id={file_id} not found")
        text = (await self.files.texts([file_id])).get(file_id) or ""
        _, char_limit = file_limits(agent)
        view = line_view.truncate_view(line_view.window(text, meta.file_type, meta.file_name), True, char_limit)
        opened = await AgentFiles(self.session).open(agent, meta, view)
        await self.rebuild_prompts(self.session, [agent])
        return opened.closed

    async def close(self, actor: Actor, agent_id: str, file_id: str) -> None:
        agent = await self._agent(actor, agent_id)
        if await self.rows.find_by_file(agent_id, file_id) is None:
            raise NotFoundError("File", file_id, message=f"File with id={file_id} is not attached to agent {agent_id}")
        await AgentFiles(self.session).close(agent_id, file_id)
        await self.rebuild_prompts(self.session, [agent])

    async def close_all(self, actor: Actor, agent_id: str) -> list[str]:
        agent = await self._agent(actor, agent_id)
        closed = await AgentFiles(self.session).close_all_except(agent_id)
        await self.rebuild_prompts(self.session, [agent])
        return closed
