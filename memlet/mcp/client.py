"""The one place that speaks MCP: a short session per operation (connect, initialize, one request, close) over the
official `mcp` SDK's stdio, SSE or streamable-HTTP client.

Every operation has two deadlines that really apply: `connect_timeout_s` for spawning or connecting plus the MCP
handshake, and `call_timeout_s` for the request itself. A server that hangs fails the operation with
`MCPTimeoutError`; one that cannot be reached or exits fails it with `MCPConnectError`. An error a reachable server
answers a tools/call with is not a failure of the operation: `call_tool` returns it as the tool's failed result. HTTP connections go
through memlet's outbound-URL policy (`memlet.net.transport`), so a private or loopback server is reached only when
its host is on `MEMLET_ALLOWED_HOSTS`.

The SDK (~55 MB resident with its wire types) is imported on the first operation, not when the server starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from memlet.net.outbound import OutboundPolicy

if TYPE_CHECKING:
    import httpx2
    import mcp_types
    from mcp.client.session import ClientSession

T = TypeVar("T")
# Past the two deadlines, this much more for the transport to shut down before the whole operation is abandoned.
_CLOSE_GRACE_S = 5.0
_STDERR_TAIL = 500


class MCPError(Exception):
    """An MCP operation failed (the message is safe to show)."""


class MCPConnectError(MCPError):
    """The server could not be reached, did not start, or broke the connection."""


class MCPTimeoutError(MCPError):
    """The server did not answer in time."""


class MCPAuthRequired(MCPConnectError):
    """The server answered HTTP 401: it wants a (valid) token, or OAuth authorization."""


@dataclass(frozen=True)
class ServerSpec:
    """How to reach one server, credentials in plaintext (built just before connecting, never stored)."""

    server_type: str  # stdio | sse | streamable_http
    name: str = ""
    server_url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] | None = None
    auth: httpx2.Auth | None = None  # an OAuth provider (memlet.mcp.oauth) while a user authorizes


@dataclass(frozen=True)
class Limits:
    connect_timeout_s: float
    call_timeout_s: float
    policy: OutboundPolicy


@dataclass(frozen=True)
class CallResult:
    text: str
    success: bool


def _guarded_factory(policy: OutboundPolicy, statuses: set[int]) -> Callable[..., httpx2.AsyncClient]:
    """httpx2 clients for the SDK: policy-checked connections; every response status is noted in `statuses`
    (the SDK turns an HTTP error into a generic JSON-RPC error, and a 401 must be told apart)."""
    import httpx2  # with the SDK, on the first operation: a server that never uses MCP does not load it

    from memlet.net.transport import GuardedTransport

    async def note(response: httpx2.Response) -> None:
        statuses.add(response.status_code)

    def factory(
        headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None, auth: httpx2.Auth | None = None
    ) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(
            transport=GuardedTransport(policy),
            headers=headers,
            timeout=timeout,
            auth=auth,
            follow_redirects=False,
            trust_env=False,
            event_hooks={"response": [note]},
        )

    return factory


@contextlib.asynccontextmanager
async def _streams(spec: ServerSpec, limits: Limits, errlog: Any, statuses: set[int]) -> AsyncIterator[Any]:
    import httpx2

    timeout = httpx2.Timeout(limits.connect_timeout_s, read=limits.call_timeout_s + limits.connect_timeout_s)
    factory = _guarded_factory(limits.policy, statuses)
    if spec.server_type == "stdio":
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(command=spec.command or "", args=spec.args, env=spec.env)
        async with stdio_client(params, errlog=errlog) as streams:
            yield streams
    elif spec.server_type == "sse":
        from mcp.client.sse import sse_client

        async with sse_client(
            spec.server_url or "",
            headers=spec.headers,
            timeout=limits.connect_timeout_s,
            sse_read_timeout=limits.call_timeout_s + limits.connect_timeout_s,
            httpx_client_factory=factory,
            auth=spec.auth,
        ) as streams:
            yield streams
    else:
        from mcp.client.streamable_http import streamable_http_client

        async with (
            factory(headers=spec.headers, timeout=timeout, auth=spec.auth) as http,
            streamable_http_client(spec.server_url or "", http_client=http) as streams,
        ):
            yield streams


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (possibly nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _stderr_tail(errlog: Any) -> str:
    try:
        errlog.seek(0)
        text = errlog.read()[-_STDERR_TAIL:]
    except (OSError, ValueError):
        return ""
    return f" (stderr: {text.strip()})" if text.strip() else ""


async def run(spec: ServerSpec, limits: Limits, op: Callable[[ClientSession], Awaitable[T]], what: str) -> T:
    """Connect to `spec`, initialize, run `op` on the session under the call deadline, close."""
    from mcp.client.session import ClientSession

    statuses: set[int] = set()
    with tempfile.TemporaryFile("w+") as errlog:

        async def session_op() -> T:
            async with _streams(spec, limits, errlog, statuses) as (read, write), ClientSession(read, write) as session:
                try:
                    with anyio.fail_after(limits.connect_timeout_s):
                        await session.initialize()
                except TimeoutError:
                    raise MCPTimeoutError(
                        f"MCP server {spec.name!r} did not finish connecting within {limits.connect_timeout_s:g} s"
                    ) from None
                try:
                    with anyio.fail_after(limits.call_timeout_s):
                        return await op(session)
                except TimeoutError:
                    raise MCPTimeoutError(
                        f"MCP server {spec.name!r} did not answer {what} within {limits.call_timeout_s:g} s"
                    ) from None

        deadline = limits.connect_timeout_s + limits.call_timeout_s + _CLOSE_GRACE_S
        try:
            return await asyncio.wait_for(session_op(), deadline)
        except MCPError:
            raise
        except TimeoutError:
            raise MCPTimeoutError(f"MCP server {spec.name!r} did not answer {what} within {deadline:g} s") from None
        except Exception as exc:
            leaf = _leaf(exc)
            if isinstance(leaf, MCPError):
                raise leaf from None
            detail = f"{type(leaf).__name__}: {leaf}".rstrip(": ")
            if 401 in statuses:
                raise MCPAuthRequired(
                    f"MCP server {spec.name!r} answered 401 Unauthorized: it needs a valid token or authorization"
                ) from None
            raise MCPConnectError(
                f"Failed to connect to MCP server {spec.name!r}: {detail}{_stderr_tail(errlog)}"
            ) from None


async def list_tools(spec: ServerSpec, limits: Limits) -> list[mcp_types.Tool]:
    import mcp_types

    async def op(session: ClientSession) -> list[mcp_types.Tool]:
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        while True:
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            tools += page.tools
            cursor = page.next_cursor
            if not cursor:
                return tools

    return await run(spec, limits, op, "tools/list")


def result_text(result: Any) -> str:
    """Text parts joined with spaces, other parts as JSON; "Empty response from tool" for no content."""
    parts: list[str] = []
    for block in getattr(result, "content", None) or []:
        text = getattr(block, "text", None)
        parts.append(text if isinstance(text, str) else block.model_dump_json(by_alias=True, exclude_none=True))
    if not parts and getattr(result, "structured_content", None) is not None:
        return str(result.structured_content)
    return " ".join(parts) if parts else "Empty response from tool"


async def call_tool(spec: ServerSpec, limits: Limits, name: str, args: dict[str, Any]) -> CallResult:
    """The tool's answer; an error the server answered with (a JSON-RPC error, a result with `isError`) is a failed
    result carrying the server's message, as Letta's `execute_tool` returns it. Only a connection that broke off,
    or a deadline, raises."""
    import mcp_types
    from mcp.shared.exceptions import MCPError as SDKError

    async def op(session: ClientSession) -> CallResult:
        try:
            result = await session.call_tool(name, args)
        except SDKError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED:
                raise
            return CallResult(str(exc), False)
        return CallResult(result_text(result), not bool(getattr(result, "is_error", False)))

    return await run(spec, limits, op, f"tools/call {name}")


def tool_dict(tool: mcp_types.Tool) -> dict[str, Any]:
    """An MCP tool in Letta's `MCPTool` wire shape (camelCase names, `_meta`)."""
    return tool.model_dump(mode="json", by_alias=True, exclude_none=True)


__all__ = [
    "CallResult",
    "Limits",
    "MCPAuthRequired",
    "MCPConnectError",
    "MCPError",
    "MCPTimeoutError",
    "ServerSpec",
    "call_tool",
    "list_tools",
    "tool_dict",
]
