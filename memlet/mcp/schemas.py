"""Wire models for MCP servers: the `/v1/mcp-servers` API and the legacy `/v1/tools/mcp/servers` configs
(Letta 0.16.8 names and shapes). Secrets in responses are always masked (`MASK`)."""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

_REQUEST = ConfigDict(extra="ignore")
ServerName = Annotated[str, Field(min_length=1, max_length=255)]
Headers = dict[str, str]


class _Stdio(BaseModel):
    model_config = _REQUEST
    command: str = Field(min_length=1)
    args: list[str]
    env: dict[str, str] | None = None


class _Http(BaseModel):
    model_config = _REQUEST
    server_url: str = Field(min_length=1)
    auth_header: str | None = None
    auth_token: str | None = None
    custom_headers: Headers | None = None


class CreateStdioMCPServer(_Stdio):
    mcp_server_type: Literal["stdio"] = "stdio"


class CreateSSEMCPServer(_Http):
    mcp_server_type: Literal["sse"] = "sse"


class CreateStreamableHTTPMCPServer(_Http):
    mcp_server_type: Literal["streamable_http"] = "streamable_http"


CreateConfig = Annotated[
    CreateStdioMCPServer | CreateSSEMCPServer | CreateStreamableHTTPMCPServer, Field(discriminator="mcp_server_type")
]


class CreateMCPServerRequest(BaseModel):
    model_config = _REQUEST
    server_name: ServerName
    config: CreateConfig


class UpdateStdioMCPServer(BaseModel):
    model_config = _REQUEST
    mcp_server_type: Literal["stdio"] = "stdio"
    command: str | None = Field(default=None, min_length=1)
    args: list[str] | None = None
    env: dict[str, str] | None = None


class _HttpUpdate(BaseModel):
    model_config = _REQUEST
    server_url: str | None = Field(default=None, min_length=1)
    auth_header: str | None = None
    auth_token: str | None = None
    custom_headers: Headers | None = None


class UpdateSSEMCPServer(_HttpUpdate):
    mcp_server_type: Literal["sse"] = "sse"


class UpdateStreamableHTTPMCPServer(_HttpUpdate):
    mcp_server_type: Literal["streamable_http"] = "streamable_http"


UpdateConfig = Annotated[
    UpdateStdioMCPServer | UpdateSSEMCPServer | UpdateStreamableHTTPMCPServer, Field(discriminator="mcp_server_type")
]


class UpdateMCPServerRequest(BaseModel):
    model_config = _REQUEST
    server_name: ServerName | None = None
    config: UpdateConfig


class StdioMCPServer(BaseModel):
    mcp_server_type: Literal["stdio"] = "stdio"
    command: str
    args: list[str]
    env: dict[str, str] | None = None
    id: str
    server_name: str


class SSEMCPServer(BaseModel):
    mcp_server_type: Literal["sse"] = "sse"
    server_url: str
    auth_header: str | None = None
    auth_token: str | None = None
    custom_headers: Headers | None = None
    id: str
    server_name: str


class StreamableHTTPMCPServer(SSEMCPServer):
    mcp_server_type: Literal["streamable_http"] = "streamable_http"  # type: ignore[assignment]


MCPServerOut = StdioMCPServer | SSEMCPServer | StreamableHTTPMCPServer


# --- the legacy `/v1/tools/mcp/servers` configs (`type` instead of `mcp_server_type`, keyed by name) ---


class StdioServerConfig(_Stdio):
    server_name: ServerName
    type: Literal["stdio"] = "stdio"


class SSEServerConfig(_Http):
    server_name: ServerName
    type: Literal["sse"] = "sse"


class StreamableHTTPServerConfig(_Http):
    server_name: ServerName
    type: Literal["streamable_http"] = "streamable_http"


LegacyConfig = StdioServerConfig | SSEServerConfig | StreamableHTTPServerConfig


_LEGACY_UPDATE = ConfigDict(extra="allow")


class LegacyUpdateStdio(BaseModel):
    model_config = _LEGACY_UPDATE
    server_name: ServerName | None = None
    stdio_config: StdioServerConfig | None = None


class LegacyUpdateSSE(BaseModel):
    model_config = _LEGACY_UPDATE
    server_name: ServerName | None = None
    server_url: str | None = Field(default=None, min_length=1)
    token: str | None = None
    custom_headers: Headers | None = None


class LegacyUpdateStreamableHTTP(BaseModel):
    model_config = _LEGACY_UPDATE
    server_name: ServerName | None = None
    server_url: str | None = Field(default=None, min_length=1)
    auth_header: str | None = None
    auth_token: str | None = None
    custom_headers: Headers | None = None


LegacyUpdate = LegacyUpdateStdio | LegacyUpdateStreamableHTTP | LegacyUpdateSSE


class MCPToolExecuteRequest(BaseModel):
    """Body of the MCP tool-run routes: the tool's arguments by name; unknown keys are ignored."""

    # Letta calls it ToolExecuteRequest too; turns.tool_run.ToolExecuteRequest is the strict one (extra="forbid").
    model_config = ConfigDict(extra="ignore", title="ToolExecuteRequest")
    args: dict[str, Any] = Field(default_factory=dict, description="Arguments to pass to the tool")


class ToolExecutionResult(BaseModel):
    """Letta's ``ToolExecutionResult``; ``agent_state`` is deprecated and always null, as in Letta 0.16.8."""

    status: Literal["success", "error"]
    func_return: Any = None
    agent_state: None = None
    stdout: list[str] | None = None
    stderr: list[str] | None = None
    sandbox_config_fingerprint: str | None = None


class ToolsChanged(BaseModel):
    """What a refresh (or legacy resync) did, by tool name."""

    deleted: list[str] = Field(default_factory=list)
    updated: list[str] = Field(default_factory=list)
    added: list[str] = Field(default_factory=list)
