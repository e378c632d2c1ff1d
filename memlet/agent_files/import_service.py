"""Import a checked agent file: everything in the caller's one transaction, so a failure leaves no rows.

Order: MCP servers (reused by name or created without credentials) with the MCP tools pointed at them, tools
(built-ins mapped, custom upserted), blocks (new rows), folders and their files (the text stored, embedded after
commit with the folder's own embedding config, which memlet's file search also uses: the override, else the
source's; Letta embedded them with the override or the first agent's config, whatever the folder's), agents
(through `AgentService.create`), every message of each agent (through `MessageRepository.add`, new ids, timestamps
and tool-call ids kept), the in-context list, then the folders attached, and last the groups (`group_import.py`).
The file ids of the files to embed are returned for the caller to submit after commit.
"""

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.agent_files.group_import import import_groups
from memlet.agent_files.mcp_servers import MCPLinker
from memlet.agent_files.schemas import AgentFileSchema, AgentSchema, FileSchema, MessageSchema, SourceSchema
from memlet.agent_files.tool_import import import_tools
from memlet.agents.catalog import Catalog
from memlet.agents.repository import AgentRepository
from memlet.agents.schemas import CreateAgent
from memlet.agents.service import AgentService
from memlet.blocks.repository import BlockRepository
from memlet.blocks.schemas import CreateBlock
from memlet.blocks.service import new_block
from memlet.config import Settings
from memlet.db import models as orm
from memlet.folders.file_repository import FileRepository
from memlet.folders.repository import FolderRepository
from memlet.folders.schemas import SourceCreate
from memlet.folders.service import FolderService
from memlet.mcp.repository import MCPServerRepository
from memlet.mcp.service import MCPServerService
from memlet.messages.repository import MessageRepository
from memlet.prompt.rebuild import PromptRebuilder
from memlet.providers.schemas import EmbeddingConfig

# Messages per INSERT: each row binds ~20 parameters and Postgres allows 32,767 per statement.
MESSAGE_BATCH = 1000


@dataclass
class ImportOptions:
    append_copy_suffix: bool = True
    name: str | None = None
    override_existing_tools: bool = True
    strip_messages: bool = False
    secrets: dict[str, str] = field(default_factory=dict)
    project_id: str | None = None
    model: str | None = None
    embedding: str | None = None


@dataclass
class ImportResult:
    agent_ids: list[str]
    file_ids: list[str]  # to embed once the transaction has committed


def _utc(value: datetime | None) -> datetime | None:
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


def _content(value: list[dict[str, Any]] | str | None) -> list[dict[str, Any]]:
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    return value


class ImportService:
    def __init__(
        self, session: AsyncSession, catalog: Catalog, rebuild_prompts: PromptRebuilder, settings: Settings
    ) -> None:
        self.session = session
        self.mcp = MCPLinker(MCPServerService(session, settings), MCPServerRepository(session))
        self.catalog = catalog
        self.agents = AgentService(session, catalog)
        self.folders = FolderService(session, rebuild_prompts, catalog)  # type: ignore[arg-type]
        self.blocks = BlockRepository(session)
        self.files = FileRepository(session)
        self.messages = MessageRepository(session)

    async def import_file(self, actor: Actor, file: AgentFileSchema, options: ImportOptions) -> ImportResult:
        tools = await self.mcp.link(actor, file)
        tool_ids = await import_tools(self.session, actor, tools, override_existing=options.override_existing_tools)
        block_ids = await self._blocks(actor, file)
        embeddings = await self._folder_embeddings(actor, file, options.embedding)
        source_ids = {s.id: await self._folder(actor, s, embeddings) for s in file.sources}
        file_ids = {f.id: await self._file(actor, f, source_ids[f.source_id]) for f in file.files}
        agent_ids: dict[str, str] = {}
        for agent in file.agents:
            agent_id, stored_prompt = await self._agent(actor, agent, options, tool_ids, block_ids)
            for source in dict.fromkeys([*agent.source_ids, *(agent.folder_ids or [])]):
                # As Letta's import: an agent keeps the system message its file stores (no recompile); one
                # compiled here gets the folders' files.
                await self.folders.attach(actor, agent_id, source_ids[source], recompile=not stored_prompt)
            agent_ids[agent.id] = agent_id
        await import_groups(self.session, actor, file.groups, agent_ids, block_ids, options.project_id)
        return ImportResult(list(agent_ids.values()), list(file_ids.values()))

    async def _blocks(self, actor: Actor, file: AgentFileSchema) -> dict[str, str]:
        rows = []
        for block in file.blocks:
            spec = CreateBlock.model_validate(block.model_dump(exclude={"id"}))
            rows.append(new_block(actor, spec))
        await self.blocks.add_many(rows)
        return {b.id: row.id for b, row in zip(file.blocks, rows, strict=True)}

    async def _folder_embeddings(
        self, actor: Actor, file: AgentFileSchema, override: str | None
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """The embedding override for every folder, and the config of a source that names none (the first agent's)."""
        if not file.sources:
            return None, None
        if override:
            return await self.catalog.resolve_embedding(self.session, actor.organization_id, override), None
        first = file.agents[0].embedding_config if file.agents else None
        return None, first.model_dump(mode="json") if first is not None else None

    async def _folder(
        self, actor: Actor, source: SourceSchema, embeddings: tuple[dict[str, Any] | None, dict[str, Any] | None]
    ) -> str:
        """A folder for the source: the override's embedding config, else the source's own (Letta's rule), else its
        `embedding` handle, else the first agent's config."""
        override, fallback = embeddings
        own = source.embedding_config.model_dump(mode="json") if source.embedding_config else None
        config = override or own or (None if source.embedding else fallback)
        name, repo = source.name, FolderRepository(self.session)
        while await repo.find_by_name(actor.organization_id, name) is not None:
            name = f"{source.name}_{ids.new_id('x')[-8:]}"
        request = SourceCreate(
            name=name,
            description=source.description,
            instructions=source.instructions,
            metadata=source.metadata,
            embedding=None if config else source.embedding,
            embedding_config=EmbeddingConfig.model_validate(config) if config else None,
            embedding_chunk_size=source.embedding_chunk_size,
        )
        row = await self.folders.create(actor, request)
        return row.id

    async def _file(self, actor: Actor, meta: FileSchema, folder_id: str) -> str:
        folder = await self.folders.get(actor, folder_id)
        text = meta.content or ""
        original = meta.original_file_name or (meta.file_name or meta.id).rsplit("/", 1)[-1]
        row = orm.FileMetadata(
            id=ids.new_id(ids.Prefix.FILE),
            organization_id=actor.organization_id,
            source_id=folder_id,
            file_name=f"{folder.name}/{original}",
            original_file_name=original,
            file_path=meta.file_path,
            file_type=meta.file_type or "text/plain",
            file_size=meta.file_size if meta.file_size is not None else len(text.encode()),
            file_creation_date=meta.file_creation_date,
            file_last_modified_date=meta.file_last_modified_date,
            processing_status="embedding",  # the text is known: only embedding is left
            created_by_id=actor.user_id,
            last_updated_by_id=actor.user_id,
        )
        await self.files.add(row, text.encode())
        await self.files.set_text(row.id, text)
        return row.id

    def _create_request(
        self, agent: AgentSchema, options: ImportOptions, tool_ids: dict[str, str], block_ids: dict[str, str]
    ) -> CreateAgent:
        name = options.name or (f"{agent.name}_copy" if options.append_copy_suffix else agent.name)
        file_secrets = agent.secrets or agent.tool_exec_environment_variables or {}
        # As Letta: values sent with the import replace the file's (a key left out becomes ""); none sent, the file's
        # own values stay (an export blanks them, a hand-made file may carry them).
        if options.secrets:
            secrets = {key: options.secrets.get(key, "") for key in file_secrets}
        else:
            secrets = {key: value or "" for key, value in file_secrets.items()}
        return CreateAgent(
            name=name,
            agent_type=agent.agent_type,
            system=agent.system,
            description=agent.description,
            metadata=agent.metadata,
            llm_config=None if options.model else agent.llm_config,
            model=options.model,
            embedding_config=None if options.embedding else agent.embedding_config,
            embedding=options.embedding,
            tool_rules=agent.tool_rules or [],
            tags=agent.tags,
            tool_ids=[tool_ids[t] for t in agent.tool_ids if t in tool_ids],
            block_ids=[block_ids[b] for b in agent.block_ids],
            include_base_tools=False,
            include_base_tool_rules=False,
            initial_message_sequence=[],
            message_buffer_autoclear=agent.message_buffer_autoclear,
            timezone=agent.timezone,
            max_files_open=agent.max_files_open,
            per_file_view_window_char_limit=agent.per_file_view_window_char_limit,
            response_format=agent.response_format,
            enable_sleeptime=agent.enable_sleeptime,
            hidden=agent.hidden,
            secrets=secrets,
            project_id=options.project_id or agent.project_id,
        )

    async def _agent(
        self,
        actor: Actor,
        agent: AgentSchema,
        options: ImportOptions,
        tool_ids: dict[str, str],
        block_ids: dict[str, str],
    ) -> tuple[str, bool]:
        """The new agent's id, and whether its system message is the one the file stores."""
        state = await self.agents.create(actor, self._create_request(agent, options, tool_ids, block_ids))
        row = await AgentRepository(self.session).get_or_404(actor.organization_id, state.id)
        placeholder = list(row.message_ids or [])
        messages, in_context = self._messages(actor, row, agent, options)
        for start in range(0, len(messages), MESSAGE_BATCH):
            await self.messages.add(messages[start : start + MESSAGE_BATCH])
        if not in_context:
            return row.id, False  # nothing in context in the file: the agent keeps its freshly compiled system message
        roles = {m.id: m.role for m in messages}
        if roles[in_context[0]] != "system":
            row.message_ids = placeholder[:1] + in_context  # the loop needs a system message first
            return row.id, False
        row.message_ids = in_context
        await self.session.flush()
        await self.messages.delete_for_agent(row.id, placeholder)
        return row.id, True

    def _messages(
        self, actor: Actor, row: orm.Agent, agent: AgentSchema, options: ImportOptions
    ) -> tuple[list[orm.Message], list[str]]:
        wanted = agent.messages
        context = list(agent.in_context_message_ids)
        if options.strip_messages:
            by_id = {m.id: m for m in wanted}
            first = by_id.get(context[0]) if context else None
            if first is None or first.role != "system":
                return [], []
            wanted, context = [first], [first.id]
        new_ids = {m.id: ids.new_id(ids.Prefix.MESSAGE) for m in wanted}
        rows = [self._message(actor, row, m, new_ids[m.id]) for m in wanted]
        # Written now, whatever their creation time: the file's stored system prompt is then no older than the
        # blocks made for it, so the first turn sends it as the file has it (as Letta's turns do) instead of
        # recompiling it as a prompt a later block edit made stale (`refresh_if_stale`).
        now = datetime.now(UTC)
        for message in rows:
            message.updated_at = now
        return rows, [new_ids[i] for i in context]

    @staticmethod
    def _message(actor: Actor, agent: orm.Agent, m: MessageSchema, new_id: str) -> orm.Message:
        returns = [r.model_dump(mode="json") for r in m.tool_returns or []]
        return orm.Message(
            id=new_id,
            agent_id=agent.id,
            organization_id=agent.organization_id,
            role=m.role,
            content=_content(m.content),
            name=m.name,
            model=m.model,
            otid=m.otid,
            sender_id=m.sender_id,
            batch_item_id=m.batch_item_id,
            tool_calls=m.tool_calls or None,
            tool_call_id=m.tool_call_id,
            tool_returns=returns or None,
            created_at=_utc(m.created_at),
            approve=m.approve,
            approval_request_id=m.approval_request_id,
            denial_reason=m.denial_reason,
            approvals=m.approvals,
            created_by_id=actor.user_id,
        )
