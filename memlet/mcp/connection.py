"""From a stored server to a live MCP operation: the gates (stdio switch, outbound-URL policy), the plaintext
credentials for this one connection, and the deadlines from the settings."""

from typing import Any

from memlet.config import Settings
from memlet.crypto import keyring_for
from memlet.db import models as orm
from memlet.errors import BadRequestError
from memlet.mcp import credentials
from memlet.mcp.client import Limits, MCPConnectError, ServerSpec
from memlet.net.outbound import policy_for

STDIO_DISABLED = (
    "MCP stdio servers are disabled: a stdio server runs a command on the memlet host. "
    "Set MEMLET_MCP_STDIO=true to allow them."
)


def limits(settings: Settings) -> Limits:
    return Limits(settings.mcp_connect_timeout_s, settings.mcp_call_timeout_s, policy_for(settings))


def check_stdio(settings: Settings) -> None:
    """400 when stdio servers are off (at create and update)."""
    if not settings.mcp_stdio:
        raise BadRequestError(STDIO_DISABLED)


async def check_url(settings: Settings, url: str) -> None:
    """400 when the outbound-URL policy refuses `url` (scheme, loopback, private, metadata addresses...)."""
    await policy_for(settings).check_url(url, "server_url")


def spec_for(
    settings: Settings, row: orm.MCPServer, agent_id: str | None = None, secrets: dict[str, str] | None = None
) -> ServerSpec:
    """How to reach `row` now (for this agent: its id in `X-Agent-Id`, its secrets filling header templates);
    stdio servers fail here too while stdio is off (`MCPConnectError`)."""
    keyring = keyring_for(settings)
    if row.server_type == "stdio":
        if not settings.mcp_stdio:
            raise MCPConnectError(STDIO_DISABLED)
        return ServerSpec(
            "stdio",
            row.server_name,
            command=row.command or "",
            args=list(row.args or []),
            env=credentials.env(keyring, row),
        )
    headers = credentials.request_headers(keyring, row, secrets)
    if agent_id:
        headers["X-Agent-Id"] = agent_id
    return ServerSpec(row.server_type, row.server_name, server_url=row.server_url, headers=headers)


def spec_from_config(settings: Settings, config: Any) -> ServerSpec:
    """How to reach a server given only its config (the legacy `test` and `connect` routes; nothing is stored)."""
    kind = getattr(config, "type", None) or config.mcp_server_type
    name = getattr(config, "server_name", "") or ""
    if kind == "stdio":
        if not settings.mcp_stdio:
            raise MCPConnectError(STDIO_DISABLED)
        return ServerSpec("stdio", name, command=config.command, args=list(config.args), env=config.env)
    headers = dict(config.custom_headers or {})
    token = credentials.bare_token(config.auth_token)
    if token:
        header = config.auth_header or credentials.DEFAULT_AUTH_HEADER
        headers[header] = credentials.BEARER + token if header.lower() == "authorization" else token
    return ServerSpec(kind, name, server_url=config.server_url, headers=headers)
