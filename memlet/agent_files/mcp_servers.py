"""MCP servers in agent files, both ways, never with a credential.

Export lists the servers the agent's `external_mcp` tools run on (found by the server id in each tool's metadata)
in Letta's v2 shape: `server_type`, `server_name`, `server_url` and, for stdio, `stdio_config` without `env`. No
token, header, env value or OAuth data is ever read for it. Each tool's `metadata_.mcp.server_id` becomes the
server's file id (Letta left the database id there), and keeps `server_name` and `tool_name`.

Import gets each server of the file from `MCPServerService.import_server`: the organization's server of that name,
or a new one with no credentials (a stdio one only while `MEMLET_MCP_STDIO` allows it). Each `external_mcp` tool is
then pointed at its server by id: the file's server its metadata names (by file id, else by name), else the
organization's server of that id or name. A tool left without a server keeps the server's name and fails clearly
when called (the executor names the server, and says when stdio is off).
"""

from typing import Any

from pydantic import ValidationError

from memlet.actor import Actor
from memlet.agent_files.reader import validation_error
from memlet.agent_files.schemas import AgentFileSchema, MCPServerSchema, ToolSchema
from memlet.db import models as orm
from memlet.errors import BadRequestError
from memlet.mcp.discovery import MCP_TOOL_TYPE, mcp_meta
from memlet.mcp.repository import MCPServerRepository
from memlet.mcp.schemas import CreateConfig, CreateSSEMCPServer, CreateStdioMCPServer, CreateStreamableHTTPMCPServer
from memlet.mcp.service import MCPServerService

_TYPES: dict[str, type[CreateStdioMCPServer | CreateSSEMCPServer | CreateStreamableHTTPMCPServer]] = {
    "stdio": CreateStdioMCPServer,
    "sse": CreateSSEMCPServer,
    "streamable_http": CreateStreamableHTTPMCPServer,
}


# --- export ---


async def servers_of(repo: MCPServerRepository, org_id: str, tools: list[orm.Tool]) -> list[orm.MCPServer]:
    """The servers the MCP tools among `tools` run on, in the order the tools name them."""
    servers: dict[str, orm.MCPServer] = {}
    for tool in tools:
        server_id = str(mcp_meta(tool).get("server_id") or "") if tool.tool_type == MCP_TOOL_TYPE else ""
        if server_id and server_id not in servers:
            row = await repo.find(org_id, server_id)
            if row is not None:
                servers[server_id] = row
    return list(servers.values())


def server_entry(row: orm.MCPServer, file_id: str) -> dict[str, Any]:
    """A server as the file carries it: where it is, never how to authenticate."""
    stdio = row.server_type == "stdio"
    return {
        "id": file_id,
        "server_type": row.server_type,
        "server_name": row.server_name,
        "server_url": None if stdio else row.server_url,
        "stdio_config": (
            {"server_name": row.server_name, "type": "stdio", "command": row.command, "args": list(row.args or [])}
            if stdio
            else None
        ),
        "metadata_": row.metadata_ or {},
    }


def exported_metadata(tool: orm.Tool, file_ids: dict[str, str]) -> dict[str, Any]:
    """A tool's metadata in the file: an MCP tool points at its server's file id."""
    metadata = dict(tool.metadata_ or {})
    meta = mcp_meta(tool)
    if tool.tool_type != MCP_TOOL_TYPE or not meta:
        return metadata
    server_id = file_ids.get(str(meta.get("server_id") or ""))
    linked = {k: v for k, v in meta.items() if k != "server_id" or not meta.get("server_name")}
    if server_id is not None:
        linked["server_id"] = server_id
    return {**metadata, "mcp": linked}


# --- import ---


def _config(index: int, server: MCPServerSchema) -> CreateConfig:
    """The server's create config from the file, credentials left out whatever the file carries."""
    stdio = server.stdio_config or {}
    kind = server.server_type or ("stdio" if stdio else "streamable_http")
    model = _TYPES.get(kind)
    if model is None:
        raise BadRequestError(
            f"Invalid agent file: mcp_servers.{index}.server_type: must be one of {', '.join(_TYPES)}, got {kind!r}"
        )
    fields = (
        {"command": stdio.get("command"), "args": stdio.get("args")}
        if kind == "stdio"
        else {"server_url": server.server_url}
    )
    where = f"mcp_servers.{index}." + ("stdio_config." if kind == "stdio" else "")
    try:
        return model.model_validate(fields)
    except ValidationError as exc:
        raise validation_error(exc, where) from exc


class MCPLinker:
    """Creates or reuses the file's servers, then points the file's MCP tools at them."""

    def __init__(self, service: MCPServerService, repo: MCPServerRepository) -> None:
        self.service = service
        self.repo = repo

    async def link(self, actor: Actor, file: AgentFileSchema) -> list[ToolSchema]:
        """The file's tools, each MCP tool's metadata and tag pointing at the server it will run on."""
        by_file_id: dict[str, tuple[MCPServerSchema, orm.MCPServer | None]] = {}
        for index, server in enumerate(file.mcp_servers):
            config = _config(index, server)
            try:
                row = await self.service.import_server(actor, server.server_name, config, server.metadata_)
            except BadRequestError as exc:
                raise BadRequestError(f"Invalid agent file: mcp_servers.{index}: {exc.message}") from exc
            by_file_id[server.id] = (server, row)
        by_name = {pair[0].server_name: pair for pair in by_file_id.values()}
        return [await self._tool(actor, tool, by_file_id, by_name) for tool in file.tools]

    async def _tool(
        self,
        actor: Actor,
        tool: ToolSchema,
        by_file_id: dict[str, tuple[MCPServerSchema, orm.MCPServer | None]],
        by_name: dict[str, tuple[MCPServerSchema, orm.MCPServer | None]],
    ) -> ToolSchema:
        meta = (tool.metadata_ or {}).get("mcp")
        if tool.tool_type != MCP_TOOL_TYPE or not isinstance(meta, dict):
            return tool
        server_id, name = str(meta.get("server_id") or ""), str(meta.get("server_name") or "")
        linked: dict[str, Any] = {"server_name": name, "tool_name": meta.get("tool_name") or tool.name}
        pair = by_file_id.get(server_id) or by_name.get(name)
        row = pair[1] if pair else await self._existing(actor, server_id, name)
        if row is not None:
            linked |= {"server_id": row.id, "server_name": row.server_name}
        elif pair is not None:
            linked |= {"server_name": pair[0].server_name, "server_type": pair[0].server_type or "stdio"}
        elif not name:
            linked["server_id"] = server_id  # nothing else names the server
        final = linked["server_name"]
        tags = [t for t in tool.tags if not t.startswith("mcp:")] + ([f"mcp:{final}"] if final else [])
        return tool.model_copy(update={"metadata_": {**(tool.metadata_ or {}), "mcp": linked}, "tags": tags})

    async def _existing(self, actor: Actor, server_id: str, name: str) -> orm.MCPServer | None:
        """The organization's server a tool names outside the file: by id (a file exported here before), else name."""
        row = await self.repo.find(actor.organization_id, server_id) if server_id else None
        if row is None and name:
            row = await self.repo.find_by_name(actor.organization_id, name)
        return row
