"""Export one agent as a v2 agent file: its blocks, tools, folders with their files' text, and the WHOLE message
history of one of its threads (`export_threads.py`; Letta exported only the in-context messages), with file-local
ids and every secret value blanked.

As in Letta, the group the agent manages comes along with its other agents: a sleeptime-enabled agent exports as
itself (`agent-0`), its sleeptime agent and the `sleeptime` group, whose id is in the main agent's `group_ids`.
Blocks and tools are listed once however many agents hold them, blocks by label and tools by name as Letta lists
them, but numbered in the order the agents name them (`IdMap`, `export_entries.py`). `mcp_servers` lists the
servers the MCP tools run on, without any credential (`mcp_servers.py`); those tools point at them by file id.
Every agent is written with `enable_sleeptime: false`, as Letta writes it: the group in the file carries the
sleeptime side, and an importer that honoured the flag would make a second sleeptime agent (memlet's import turns
it on from the group).
The file's `metadata` is `{"revision_id": ...}` naming Letta 0.16.8's schema revision, as Letta writes its own
database revision there: memlet writes (and reads) that revision's file format.
"""

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.actor import Actor
from memlet.agent_files import export_entries as entries
from memlet.agent_files.export_entries import IdMap
from memlet.agent_files.export_threads import Thread, thread_of
from memlet.agent_files.mcp_servers import server_entry, servers_of
from memlet.agent_files.schemas import ExportAgentRequest
from memlet.agents.repository import AgentRepository
from memlet.blocks.repository import BlockRepository
from memlet.db import models as orm
from memlet.folders.file_agent_repository import FileAgentRepository
from memlet.folders.file_repository import FileRepository
from memlet.folders.line_view import file_defaults_for_context_window
from memlet.folders.repository import FolderRepository
from memlet.groups.repository import GroupRepository
from memlet.mcp.repository import MCPServerRepository
from memlet.tools.repository import ToolRepository

# The agent-create fields Letta writes into every exported agent without copying them from the agent.
_UNSET_CREATE_FIELDS: dict[str, Any] = {
    "folder_ids": None,
    "identity_ids": None,
    "model_settings": None,
    "compaction_settings": None,
    "context_window_limit": None,
    "embedding_chunk_size": None,
    "max_tokens": None,
    "max_reasoning_tokens": None,
    "enable_reasoner": False,
    "reasoning": None,
    "from_template": None,
    "template": False,
    "project": None,
    "memory_variables": None,
    "template_id": None,
    "base_template_id": None,
    "parallel_tool_calls": None,
}

# Letta 0.16.8's latest database revision: the schema version its agent files carry in `metadata.revision_id`.
LETTA_SCHEMA_REVISION = "1c28e167b74f"


@dataclass
class _Held:
    """What one exported agent holds."""

    agent: orm.Agent
    blocks: list[orm.Block]
    tools: list[orm.Tool]
    folders: list[orm.Source]
    links: list[orm.FileAgent]


_Row = TypeVar("_Row", orm.Block, orm.Tool, orm.Source)


def _unique(rows: list[_Row]) -> list[_Row]:
    """Each row once, where it first appears."""
    return list({row.id: row for row in rows}.values())


class ExportService:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session
        self.agents = AgentRepository(session)
        self.groups = GroupRepository(session)

    async def export(self, actor: Actor, agent_id: str, req: ExportAgentRequest) -> dict[str, Any]:
        agent = await self.agents.get_or_404(actor.organization_id, agent_id)
        group, members = await self._group(actor, agent)
        held = [await self._held(a) for a in [agent, *members]]
        ids = IdMap()
        tools = sorted(_unique([t for h in held for t in h.tools]), key=lambda t: t.name)
        blocks = sorted(_unique([b for h in held for b in h.blocks]), key=lambda b: b.label)
        servers = await servers_of(MCPServerRepository(self.session), actor.organization_id, tools)
        server_entries = [server_entry(row, ids("mcp_server", row.id)) for row in servers]
        folders = _unique([f for h in held for f in h.folders])
        files = [f for folder in folders for f in await FileRepository(self.session).of_source(folder.id)]
        texts = await FileRepository(self.session).texts([f.id for f in files]) if files else {}
        agent_entries = []
        for h in held:
            main = h.agent is agent
            conversation_id = req.conversation_id if main else None
            agent_entries.append(await self._agent(h, ids, req, conversation_id, group if main else None))
        file_entries = [entries.file_entry(f, texts.get(f.id), ids) for f in files]
        for h, entry in zip(held, agent_entries, strict=True):
            entry["files_agents"] = [entries.link_entry(link, ids) for link in h.links if link.file_id in ids.ids]
        return {
            "agents": agent_entries,
            "groups": [await self._group_entry(group, ids)] if group is not None else [],
            "blocks": [entries.block_entry(b, ids) for b in blocks],
            "files": file_entries,
            "sources": [entries.source_entry(s, ids) for s in folders],
            "tools": [entries.tool_entry(t, ids) for t in tools],
            "mcp_servers": server_entries,
            "skills": [s.model_dump(mode="json") for s in req.skills],
            "metadata": {"revision_id": LETTA_SCHEMA_REVISION},
            "created_at": datetime.now(UTC).isoformat(),
        }

    async def _group(self, actor: Actor, agent: orm.Agent) -> tuple[orm.Group | None, list[orm.Agent]]:
        """The group the agent manages (its oldest, as `AgentState.multi_agent_group` shows it) and the group's
        other agents, in the group's order."""
        managed = await self.groups.managed_by(agent.id)
        if not managed:
            return None, []
        group = managed[0]
        wanted = [i for i in await self.groups.agent_ids(group.id) if i != agent.id]
        found = {a.id: a for a in await self.agents.by_ids(wanted) if a.organization_id == actor.organization_id}
        return group, [found[i] for i in wanted if i in found]

    async def _group_entry(self, group: orm.Group, ids: IdMap) -> dict[str, Any]:
        members = [i for i in await self.groups.agent_ids(group.id) if i in ids.ids]
        shared = await self.groups.shared_block_ids(group.id)
        return entries.group_entry(group, members, shared, ids)

    async def _held(self, agent: orm.Agent) -> _Held:
        return _Held(
            agent=agent,
            blocks=await BlockRepository(self.session).of_agent(agent.id),
            tools=await ToolRepository(self.session).of_agent(agent.id),
            folders=await FolderRepository(self.session).of_agent(agent.id),
            links=await FileAgentRepository(self.session).of_agent(agent.id),
        )

    async def _agent(
        self,
        held: _Held,
        ids: IdMap,
        req: ExportAgentRequest,
        conversation_id: str | None,
        group: orm.Group | None,
    ) -> dict[str, Any]:
        agent = held.agent
        file_agent_id = ids("agent", agent.id)
        tags = (await self.agents.tags_for([agent.id])).get(agent.id, [])
        secrets = {str(s.get("key")): "" for s in agent.secrets or [] if s.get("key")}
        max_files, chars = file_defaults_for_context_window((agent.llm_config or {}).get("context_window"))
        thread = Thread([], []) if req.scrub_messages else await thread_of(self.session, agent, conversation_id)
        message_entries = [entries.message_entry(m, ids, file_agent_id) for m in thread.messages]
        return {
            "id": file_agent_id,
            "name": agent.name,
            "memory_blocks": [],
            "tools": [],
            "tool_ids": [ids("tool", t.id) for t in held.tools],
            "source_ids": [ids("source", s.id) for s in held.folders],
            "block_ids": [ids("block", b.id) for b in held.blocks],
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
            **_UNSET_CREATE_FIELDS,
            "tool_exec_environment_variables": secrets,
            "secrets": secrets or None,  # as Letta: null for an agent without secrets (its env vars stay {})
            "project_id": None,
            "message_buffer_autoclear": agent.message_buffer_autoclear,
            "enable_sleeptime": False,
            "response_format": agent.response_format,
            "timezone": agent.timezone or "UTC",
            # As Letta's export (from its AgentState): unset file limits are those the model's context window gives.
            "max_files_open": agent.max_files_open if agent.max_files_open is not None else max_files,
            "per_file_view_window_char_limit": (
                agent.per_file_view_window_char_limit if agent.per_file_view_window_char_limit is not None else chars
            ),
            "hidden": agent.hidden,
            "in_context_message_ids": [ids.ids[i] for i in thread.in_context],
            "messages": message_entries,
            "files_agents": [],
            "group_ids": [ids("group", group.id)] if group is not None else [],
        }
