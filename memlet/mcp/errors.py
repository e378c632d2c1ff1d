"""MCP failures as HTTP errors, in Letta's envelopes."""

from typing import Any

from memlet.errors import MemletError
from memlet.mcp.client import MCPError, MCPTimeoutError


class MCPConnectionFailed(MemletError):
    """502 `{"error": {"type": "mcp_connection_error", ...}}`: the server could not be reached or broke off."""

    status_code = 502

    def body(self) -> dict[str, Any]:
        return {
            "error": {
                "type": "mcp_connection_error",
                "message": "Failed to connect to MCP server.",
                "detail": f"INTERNAL_SERVER_ERROR: {self.message}",
            }
        }


class MCPTimedOut(MemletError):
    """408 `{"detail": "TIMEOUT: ..."}`."""

    status_code = 408

    def body(self) -> dict[str, Any]:
        return {"detail": f"TIMEOUT: {self.message}"}


class MCPServerUnavailable(MemletError):
    """404 `{"detail": {"code": "MCPServerUnavailable", ...}}` (refresh of a server that does not answer)."""

    status_code = 404

    def __init__(self, server_name: str, error: str) -> None:
        super().__init__(f"Could not connect to MCP server {server_name!r} to refresh its tools")
        self.error = error

    def body(self) -> dict[str, Any]:
        return {"detail": {"code": "MCPServerUnavailable", "message": self.message, "error": self.error}}


class MCPServerNotFound(MemletError):
    """404 `{"detail": {"code": "MCPServerNotFoundError", ...}}` (legacy routes, by name)."""

    status_code = 404

    def __init__(self, name: str) -> None:
        super().__init__(f"MCP server {name!r} not found")
        self.name = name

    def body(self) -> dict[str, Any]:
        return {"detail": {"code": "MCPServerNotFoundError", "message": self.message, "mcp_server_name": self.name}}


def http_error(exc: MCPError) -> MemletError:
    return MCPTimedOut(str(exc)) if isinstance(exc, MCPTimeoutError) else MCPConnectionFailed(str(exc))
