"""Rows as the entries of an exported agent file, with file-local ids: pure functions, no I/O.

`IdMap` renumbers database ids per prefix in the order they are met (`agent-0`, `tool-0`...), for the whole export.
"""

from collections import defaultdict
from datetime import datetime
from typing import Any

from memlet.agent_files.mcp_servers import exported_metadata
from memlet.db import models as orm
from memlet.groups.schemas import (
    DynamicManager,
    RoundRobinManager,
    SleeptimeManager,
    SupervisorManager,
    VoiceSleeptimeManager,
)


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


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def message_entry(m: orm.Message, ids: IdMap, agent_file_id: str) -> dict[str, Any]:
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
        "created_at": iso(m.created_at),
        "approve": m.approve,
        "approval_request_id": m.approval_request_id,
        "denial_reason": m.denial_reason,
        "approvals": m.approvals,
    }


def block_entry(b: orm.Block, ids: IdMap) -> dict[str, Any]:
    """A block as Letta writes it: every field of a block create, the template ids and tags left null (Letta does
    not copy them into a file)."""
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
        "template_id": None,
        "base_template_id": None,
        "deployment_id": None,
        "entity_id": None,
        "tags": None,
        "metadata": b.metadata_ or {},
    }


def tool_entry(t: orm.Tool, ids: IdMap) -> dict[str, Any]:
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
        "created_by_id": t.created_by_id,  # as Letta writes them: the exporting server's user ids
        "last_updated_by_id": t.last_updated_by_id,
        "metadata_": exported_metadata(t, ids.ids),
        "project_id": t.project_id,
    }


def source_entry(s: orm.Source, ids: IdMap) -> dict[str, Any]:
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


def file_entry(f: orm.FileMetadata, text: str | None, ids: IdMap) -> dict[str, Any]:
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


def link_entry(link: orm.FileAgent, ids: IdMap) -> dict[str, Any]:
    return {
        "id": link.id,
        "agent_id": ids.ids[link.agent_id],
        "file_id": ids.ids[link.file_id],
        "source_id": ids.ids[link.source_id],
        "file_name": link.file_name,
        "is_open": link.is_open,
        "visible_content": link.visible_content,
        "last_accessed_at": iso(link.last_accessed_at),
        "start_line": link.start_line,
        "end_line": link.end_line,
    }


_CONFIGS = (RoundRobinManager, SupervisorManager, DynamicManager, SleeptimeManager, VoiceSleeptimeManager)
# The columns each pattern's `manager_config` carries, read from its create schema: `manager_type` first.
_CONFIG_FIELDS = {str(c.model_fields["manager_type"].default): tuple(c.model_fields) for c in _CONFIGS}


def group_entry(g: orm.Group, agent_ids: list[str], shared_block_ids: list[str], ids: IdMap) -> dict[str, Any]:
    """A group whose agents (and manager) are all in the file already; a shared block outside the file is left
    out (Letta wrote its database id, which no other server knows)."""
    config = {name: getattr(g, name) for name in _CONFIG_FIELDS.get(g.manager_type, ("manager_type",))}
    if config.get("manager_agent_id") is not None:
        config["manager_agent_id"] = ids.ids[config["manager_agent_id"]]
    return {
        "id": ids("group", g.id),
        "agent_ids": [ids.ids[a] for a in agent_ids],
        "description": g.description,
        "manager_config": config,
        "project_id": g.project_id,
        "shared_block_ids": [ids.ids[b] for b in shared_block_ids if b in ids.ids],
        "hidden": g.hidden,
    }
