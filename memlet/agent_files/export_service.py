"""Export one agent as a v2 agent file: its blocks, tools, folders with their files' text, and its WHOLE message
history (Letta exported only the in-context messages), with file-local ids and every secret value blanked.

Ids are renumbered per prefix in the order they are met (`agent-0`, `tool-0`...). `mcp_servers` lists the servers
the agent's MCP tools run on, without any credential (`mcp_servers.py`); those tools point at them by file id.
"""

from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.actor import Actor
from memlet.agent_files.mcp_servers import exported_metadata, server_entry, servers_of
from memlet.agent_files.schemas import ExportAgentRequest
from memlet.agents.repository import AgentRepository
from memlet.blocks.repository import BlockRepository
from memlet.db import models as orm
from memlet.folders.file_agent_repository import FileAgentRepository
from memlet.folders.file_repository import FileRepository
from memlet.folders.repository import FolderRepository
from memlet.mcp.repository import MCPServerRepository
from memlet.messages.repository import MessageRepository
from memlet.tools.repository import ToolRepository


class IdMap:
    """Database id → file id, one counter per prefix for the whole export."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}
        self.counters: dict[str, int] = defaultdict(int)

    def __call__(self, prefix: str, db_id: str) -> str:
        if db_id not in self.ids:
            self.ids[db_id] = f"{prefix}-{self.counters[prefix]}"
            self.counters[prefix] += 1
        return self.ids[db_id]


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


class ExportService:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def export(self, actor: Actor, agent_id: str, req: ExportAgentRequest) -> dict[str, Any]:
        agent = await AgentRepository(self.session).get_or_404(actor.organization_id, agent_id)
        ids = IdMap()
        blocks = await BlockRepository(self.session).of_agent(agent.id)
        tools = await ToolRepository(self.session).of_agent(agent.id)
        servers = await servers_of(MCPServerRepository(self.session), actor.organization_id, tools)
        server_entries = [server_entry(row, ids("mcp_server", row.id)) for row in servers]
        folders = await FolderRepository(self.session).of_agent(agent.id)
        files = [f for folder in folders for f in await FileRepository(self.session).of_source(folder.id)]
        texts = await FileRepository(self.session).texts([f.id for f in files]) if files else {}
        links = await FileAgentRepository(self.session).of_agent(agent.id)
        entry = await self._agent(agent, ids, req, blocks, tools, folders)
        file_entries = [self._file(f, texts.get(f.id), ids) for f in files]
        entry["files_agents"] = [self._link(link, ids) for link in links if link.file_id in ids.ids]
        return {
            "agents": [entry],
            "groups": [],
            "blocks": [self._block(b, ids) for b in blocks],
            "files": file_entries,
            "sources": [self._source(s, ids) for s in folders],
            "tools": [self._tool(t, ids) for t in tools],
            "mcp_servers": server_entries,
            "skills": [s.model_dump(mode="json") for s in req.skills],
            "metadata": {"exported_by": "memlet"},
            "created_at": datetime.now(UTC).isoformat(),
        }

    async def _agent(
        self,
        agent: orm.Agent,
        ids: IdMap,
        req: ExportAgentRequest,
        blocks: list[orm.Block],
        tools: list[orm.Tool],
        folders: list[orm.Source],
    ) -> dict[str, Any]:
        file_agent_id = ids("agent", agent.id)
        tags = (await AgentRepository(self.session).tags_for([agent.id])).get(agent.id, [])
        secrets = {str(s.get("key")): "" for s in agent.secrets or [] if s.get("key")}
        messages: list[orm.Message] = []
        if not req.scrub_messages:
            found = await MessageRepository(self.session).agent_tail(
                agent.organization_id,
                agent.id,
                after=None,
                before=None,
                limit=None,
                conversation_id=req.conversation_id,
            )
            messages = found[1] if found is not None else []
        message_entries = [self._message(m, ids, file_agent_id) for m in messages]
        exported = {m.id for m in messages}
        return {
            "id": file_agent_id,
            "name": agent.name,
            "memory_blocks": [],
            "tools": [],
            "tool_ids": [ids("tool", t.id) for t in tools],
            "source_ids": [ids("source", s.id) for s in folders],
            "block_ids": [ids("block", b.id) for b in blocks],
            "tool_rules": agent.tool_rules or [],
            "tags": tags,
            "system": agent.system,
            "agent_type": agent.agent_type,
            "llm_config": agent.llm_config,
            "embedding_config": agent.embedding_config,
            "initial_message_sequence": None,
            "include_base_tools": False,
            "include_multi_agent_tools": False,
            "include_base_tool_rules": False,
            "include_default_source": False,
            "description": agent.description,
            "metadata": agent.metadata_,
            "model": None,
            "embedding": None,
            "tool_exec_environment_variables": secrets,
            "secrets": secrets,
            "project_id": None,
            "message_buffer_autoclear": agent.message_buffer_autoclear,
            "enable_sleeptime": False,
            "response_format": agent.response_format,
            "timezone": agent.timezone or "UTC",
            "max_files_open": agent.max_files_open,
            "per_file_view_window_char_limit": agent.per_file_view_window_char_limit,
            "hidden": agent.hidden,
            "in_context_message_ids": [ids.ids[i] for i in agent.message_ids or [] if i in exported],
            "messages": message_entries,
            "files_agents": [],
            "group_ids": [],
        }

    @staticmethod
    def _message(m: orm.Message, ids: IdMap, agent_file_id: str) -> dict[str, Any]:
        return {
            "id": ids("message", m.id),
            "type": "message",
            "role": m.role,
            "content": m.content or [],
            "name": m.name,
            "otid": m.otid,
            "sender_id": m.sender_id,
            "batch_item_id": m.batch_item_id,
            "group_id": None,
            "model": m.model,
            "agent_id": agent_file_id,
            "tool_calls": m.tool_calls,
            "tool_call_id": m.tool_call_id,
            "tool_returns": m.tool_returns or [],
            "created_at": _iso(m.created_at),
            "approve": m.approve,
            "approval_request_id": m.approval_request_id,
            "denial_reason": m.denial_reason,
            "approvals": m.approvals,
        }

    @staticmethod
    def _block(b: orm.Block, ids: IdMap) -> dict[str, Any]:
        return {
            "id": ids("block", b.id),
            "label": b.label,
            "value": b.value,
            "limit": b.limit,
            "description": b.description,
            "read_only": b.read_only,
            "hidden": b.hidden,
            "is_template": b.is_template,
            "template_name": b.template_name,
            "preserve_on_migration": b.preserve_on_migration,
            "project_id": None,
            "metadata": b.metadata_ or {},
        }

    @staticmethod
    def _tool(t: orm.Tool, ids: IdMap) -> dict[str, Any]:
        builtin = t.tool_type.startswith("letta_")
        return {
            "id": ids("tool", t.id),
            "tool_type": t.tool_type,
            "description": t.description,
            "source_type": t.source_type,
            "name": t.name,
            "tags": t.tags or [],
            "source_code": None if builtin else t.source_code,
            "json_schema": t.json_schema,
            "args_json_schema": t.args_json_schema,
            "return_char_limit": t.return_char_limit,
            "pip_requirements": t.pip_requirements,
            "npm_requirements": t.npm_requirements,
            "default_requires_approval": t.default_requires_approval,
            "enable_parallel_execution": t.enable_parallel_execution,
            "metadata_": exported_metadata(t, ids.ids),
        }

    @staticmethod
    def _source(s: orm.Source, ids: IdMap) -> dict[str, Any]:
        return {
            "id": ids("source", s.id),
            "name": s.name,
            "description": s.description,
            "instructions": s.instructions,
            "metadata": s.metadata_,
            "embedding_config": s.embedding_config,
            "embedding": None,
            "embedding_chunk_size": None,
        }

    @staticmethod
    def _file(f: orm.FileMetadata, text: str | None, ids: IdMap) -> dict[str, Any]:
        return {
            "id": ids("file", f.id),
            "source_id": ids("source", f.source_id),
            "file_name": f.file_name,
            "original_file_name": f.original_file_name,
            "file_path": f.file_path,
            "file_type": f.file_type,
            "file_size": f.file_size,
            "file_creation_date": f.file_creation_date,
            "file_last_modified_date": f.file_last_modified_date,
            "processing_status": f.processing_status,
            "error_message": f.error_message,
            "total_chunks": f.total_chunks,
            "chunks_embedded": f.chunks_embedded,
            "content": text,
        }

    @staticmethod
    def _link(link: orm.FileAgent, ids: IdMap) -> dict[str, Any]:
        return {
            "id": link.id,
            "agent_id": ids.ids[link.agent_id],
            "file_id": ids.ids[link.file_id],
            "source_id": ids.ids[link.source_id],
            "file_name": link.file_name,
            "is_open": link.is_open,
            "visible_content": link.visible_content,
            "last_accessed_at": _iso(link.last_accessed_at),
            "start_line": link.start_line,
            "end_line": link.end_line,
        }
