"""The tools of an imported agent file: built-ins mapped to the server's own rows, custom tools upserted by name.

A built-in (`letta_*` type, or a name of memlet's base tools, or a name whose existing row is a built-in) is
never overwritten by a file's copy, whatever it ships (legacy files carry `send_message` with Python source).
A built-in this server does not have is left out, with a warning. Custom and external (MCP, Composio) tools are
upserted by name; with `override_existing_tools=false` an existing tool of that name is kept as it is. MCP tools
arrive here already pointed at their servers (`mcp_servers.py`). A tool's `metadata_` is stored as the file has
it, `tool_hash` included, as Letta stores it, so an export, import and export again lists the same metadata; only
a file without a `tool_hash` gets one computed.
"""

import logging
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.agent_files.schemas import ToolSchema
from memlet.db import models as orm
from memlet.errors import BadRequestError
from memlet.tools.base_tools import BASE_TOOLS
from memlet.tools.json_schema import derive_json_schema, tool_hash
from memlet.tools.repository import ToolRepository
from memlet.tools.schemas import FUNCTION_RETURN_CHAR_LIMIT

log = logging.getLogger(__name__)
_KNOWN_TYPES = frozenset({"custom", "external_mcp", "external_composio", "external_langchain"})


def is_builtin(tool: ToolSchema, existing: orm.Tool | None) -> bool:
    if tool.tool_type.startswith("letta_") or tool.name in BASE_TOOLS:
        return True
    return existing is not None and existing.tool_type.startswith("letta_")


def _schema(index: int, tool: ToolSchema) -> dict[str, Any]:
    if tool.json_schema:
        return {**tool.json_schema, "name": tool.name}
    if tool.source_code and (tool.source_type or "python") in ("python", "json"):
        try:
            return derive_json_schema(tool.source_code, name=tool.name)
        except Exception as exc:
            raise BadRequestError(f"Invalid agent file: tools.{index}.json_schema: missing and {exc}") from exc
    raise BadRequestError(f"Invalid agent file: tools.{index}.json_schema: required for tool {tool.name!r}")


def tool_values(actor: Actor, index: int, tool: ToolSchema) -> dict[str, Any]:
    """Insert values for a non-built-in tool of the file."""
    limit = tool.return_char_limit or FUNCTION_RETURN_CHAR_LIMIT
    metadata = dict(tool.metadata_ or {})
    if not metadata.get("tool_hash"):
        metadata["tool_hash"] = tool_hash(
            tool.source_code, tool.source_type, tool.pip_requirements, tool.npm_requirements
        )
    return {
        "id": ids.new_id(ids.Prefix.TOOL),
        "organization_id": actor.organization_id,
        "name": tool.name,
        "tool_type": tool.tool_type if tool.tool_type in _KNOWN_TYPES else "custom",
        "description": tool.description,
        "tags": list(tool.tags or []),
        "source_type": tool.source_type or "python",
        "source_code": tool.source_code,
        "json_schema": _schema(index, tool),
        "args_json_schema": tool.args_json_schema,
        "return_char_limit": min(max(limit, 1), 1_000_000),
        "pip_requirements": tool.pip_requirements,
        "npm_requirements": tool.npm_requirements,
        "default_requires_approval": tool.default_requires_approval,
        "enable_parallel_execution": tool.enable_parallel_execution,
        "metadata_": metadata,
        "project_id": tool.project_id,
        "created_by_id": actor.user_id,
        "last_updated_by_id": actor.user_id,
    }


async def import_tools(
    session: AsyncSession, actor: Actor, tools: list[ToolSchema], *, override_existing: bool
) -> dict[str, str]:
    """File tool id → database tool id, for every tool that is imported or mapped."""
    repo = ToolRepository(session)
    existing = {t.name: t for t in await repo.by_names(actor.organization_id, [t.name for t in tools])}
    mapping: dict[str, str] = {}
    upserts: dict[str, tuple[list[str], dict[str, Any]]] = {}
    for index, tool in enumerate(tools):
        current = existing.get(tool.name)
        if is_builtin(tool, current):
            if current is None:
                log.warning("agent file: built-in tool %s is not on this server; left out", tool.name)
            else:
                mapping[tool.id] = current.id
        elif current is not None and not override_existing:
            mapping[tool.id] = current.id
        else:
            upserts.setdefault(tool.name, ([], tool_values(actor, index, tool)))[0].append(tool.id)
    rows = await repo.upsert_many([values for _, values in upserts.values()])
    by_name = {row.name: row.id for row in rows}
    for name, (file_tool_ids, _) in upserts.items():
        mapping.update(dict.fromkeys(file_tool_ids, by_name[name]))
    return mapping
