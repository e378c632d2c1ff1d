"""A server's live tools stored as `external_mcp` tool rows, and kept in step by refresh.

Rows belong to their server by `metadata_.mcp.server_id`, and remember the MCP tool name in
`metadata_.mcp.tool_name`, so the loop calls the right server and tool even after the server is renamed. Letta
upserted MCP tools by bare name across the organization, so a second server's `echo` overwrote the first one's (or a
custom tool). Here a tool never takes a name another tool already has: it gets `<server>__<tool>` instead, and the
model calls it by that name.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from memlet import ids
from memlet.actor import Actor
from memlet.db import models as orm
from memlet.mcp.schemas import ToolsChanged
from memlet.mcp.tool_schema import function_schema
from memlet.tools.repository import ToolRepository

if TYPE_CHECKING:
    import mcp_types

MCP_TOOL_TYPE = "external_mcp"
MAX_TOOL_NAME = 64  # what OpenAI-style function names allow
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def _safe(text: str) -> str:
    return _UNSAFE.sub("_", text) or "tool"


def mcp_meta(tool: orm.Tool) -> dict[str, Any]:
    meta = (tool.metadata_ or {}).get("mcp")
    return meta if isinstance(meta, dict) else {}


def _fields(server: orm.MCPServer, tool: mcp_types.Tool, name: str) -> dict[str, Any]:
    return {
        "description": tool.description or "",
        "json_schema": function_schema(name, tool.description, tool.input_schema),
        "tags": [f"mcp:{server.server_name}"],
        # Letta's keys in Letta's order (server_name, server_id), then memlet's tool_name.
        "metadata_": {"mcp": {"server_name": server.server_name, "server_id": server.id, "tool_name": tool.name}},
    }


class ToolSync:
    def __init__(self, tools: ToolRepository, actor: Actor) -> None:
        self.tools = tools
        self.actor = actor

    async def _free_name(self, server: orm.MCPServer, tool_name: str) -> str:
        base = _safe(tool_name)
        prefixed = f"{_safe(server.server_name)}__{base}"
        for candidate in (base, prefixed, f"{prefixed}_{server.id[-8:]}"):
            candidate = candidate[:MAX_TOOL_NAME]
            if await self.tools.find_by_name(self.actor.organization_id, candidate) is None:
                return candidate
        return f"{base[: MAX_TOOL_NAME - 37]}_{ids.new_id('x')[2:]}"

    async def _add(self, server: orm.MCPServer, tool: mcp_types.Tool) -> orm.Tool:
        name = await self._free_name(server, tool.name)
        return await self.tools.add(
            {
                "id": ids.new_id(ids.Prefix.TOOL),
                "organization_id": self.actor.organization_id,
                "name": name,
                "tool_type": MCP_TOOL_TYPE,
                "source_type": "python",
                "created_by_id": self.actor.user_id,
                "last_updated_by_id": self.actor.user_id,
                **_fields(server, tool, name),
            }
        )

    async def sync(self, server: orm.MCPServer, live: list[mcp_types.Tool]) -> ToolsChanged:
        """Make the stored tools of `server` match `live`: add new ones, update changed ones, delete gone ones."""
        stored = {
            mcp_meta(t).get("tool_name"): t for t in await self.tools.of_mcp_server(server.organization_id, server.id)
        }
        changed = ToolsChanged()
        seen: set[str] = set()
        for tool in live:
            if tool.name in seen:
                continue
            seen.add(tool.name)
            row = stored.get(tool.name)
            if row is None:
                changed.added.append((await self._add(server, tool)).name)
                continue
            fields = _fields(server, tool, row.name)
            if any(getattr(row, key) != value for key, value in fields.items()):
                for key, value in fields.items():
                    setattr(row, key, value)
                row.last_updated_by_id = self.actor.user_id
                changed.updated.append(row.name)
        gone = [t for name, t in stored.items() if name not in seen]
        await self.tools.delete_many(server.organization_id, [t.id for t in gone])
        changed.deleted = [t.name for t in gone]
        return changed

    async def ensure(self, server: orm.MCPServer, tool: mcp_types.Tool) -> orm.Tool:
        """Store one live tool of `server` (the legacy add route); an already stored one is updated."""
        for row in await self.tools.of_mcp_server(server.organization_id, server.id):
            if mcp_meta(row).get("tool_name") == tool.name:
                for key, value in _fields(server, tool, row.name).items():
                    setattr(row, key, value)
                return row
        return await self._add(server, tool)

    async def rename(self, server: orm.MCPServer) -> None:
        """Keep the tools' tags and recorded server name in step with a renamed server (their names stay)."""
        for row in await self.tools.of_mcp_server(server.organization_id, server.id):
            meta = mcp_meta(row)
            row.tags = [f"mcp:{server.server_name}"]
            row.metadata_ = {**(row.metadata_ or {}), "mcp": {**meta, "server_name": server.server_name}}
