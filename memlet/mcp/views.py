"""Stored servers as responses: the `/v1/mcp-servers` union and the legacy configs, secrets masked."""

from typing import Any

from memlet.crypto import Keyring
from memlet.db import models as orm
from memlet.mcp import credentials
from memlet.mcp.schemas import (
    MCPServerOut,
    SSEMCPServer,
    SSEServerConfig,
    StdioMCPServer,
    StdioServerConfig,
    StreamableHTTPMCPServer,
    StreamableHTTPServerConfig,
)


def _http_fields(keyring: Keyring, row: orm.MCPServer) -> dict[str, Any]:
    has_token = row.auth_token_enc is not None
    return {
        "server_url": row.server_url or "",
        "auth_header": (row.auth_header or credentials.DEFAULT_AUTH_HEADER) if has_token else None,
        "auth_token": f"{credentials.BEARER}{credentials.MASK}" if has_token else None,
        "custom_headers": credentials.masked(credentials.custom_headers(keyring, row)),
    }


def _stdio_fields(keyring: Keyring, row: orm.MCPServer) -> dict[str, Any]:
    return {
        "command": row.command or "",
        "args": list(row.args or []),
        "env": credentials.masked(credentials.env(keyring, row)),
    }


def server_out(keyring: Keyring, row: orm.MCPServer) -> MCPServerOut:
    base = {"id": row.id, "server_name": row.server_name}
    if row.server_type == "stdio":
        return StdioMCPServer(**base, **_stdio_fields(keyring, row))
    if row.server_type == "sse":
        return SSEMCPServer(**base, **_http_fields(keyring, row))
    return StreamableHTTPMCPServer(**base, **_http_fields(keyring, row))


def legacy_config(
    keyring: Keyring, row: orm.MCPServer
) -> StdioServerConfig | SSEServerConfig | StreamableHTTPServerConfig:
    if row.server_type == "stdio":
        return StdioServerConfig(server_name=row.server_name, **_stdio_fields(keyring, row))
    if row.server_type == "sse":
        return SSEServerConfig(server_name=row.server_name, **_http_fields(keyring, row))
    return StreamableHTTPServerConfig(server_name=row.server_name, **_http_fields(keyring, row))
