"""An httpx2 client whose every connection obeys the outbound policy (`memlet.net.outbound`), for the Anthropic and
MCP SDKs, which are built on httpx2; it is imported with them, on first use. memlet's own outbound calls (the
OpenAI-compatible chat and embedding calls, model lists, key checks, image fetches, callbacks) go through aiohttp
(`memlet.net.aio`, `memlet.net.fetch`) under the same policy.

DNS rebinding: the check and the connection use the same lookup. The network backend resolves the host itself,
refuses the connection when any address it got is not allowed, and connects to one of those checked addresses.
The URL's host stays in the Host header and in TLS (SNI and certificate checks), because httpcore2 takes those
from the request, not from the socket. Redirects are not followed, and proxy settings from the environment are
ignored (a proxy would be the one to connect, past this check).
"""

import ssl
from collections.abc import Iterable
from functools import cache
from typing import Any

import httpcore2
import httpx2

from memlet.net.outbound import BLOCKED_MESSAGE, MAX_CONNECTIONS, OutboundPolicy, RefusedHostError

MAX_KEEPALIVE = 100  # the OpenAI SDK's default


class OutboundBlockedError(httpcore2.ConnectError):
    """A connection the policy refused (httpx2 reports it as a ConnectError: the target is unreachable)."""


class GuardedBackend(httpcore2.AsyncNetworkBackend):
    """An httpcore2 network backend that resolves, checks, then connects to a checked address; unix sockets are
    refused. A refusal is an httpcore2 ConnectError, which httpx2 reports as its own."""

    def __init__(self, policy: OutboundPolicy, inner: Any) -> None:
        self.policy = policy
        self.inner = inner

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (the backend interface passes it)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> Any:
        try:
            addresses = await self.policy.connect_addresses(host, port)
        except RefusedHostError:
            raise OutboundBlockedError(BLOCKED_MESSAGE) from None
        if addresses is None:
            return await self.inner.connect_tcp(host, port, timeout, local_address, socket_options)
        if not addresses:
            raise httpcore2.ConnectError(f"could not resolve {host}")
        error: Exception | None = None
        for ip in addresses:
            try:
                return await self.inner.connect_tcp(str(ip), port, timeout, local_address, socket_options)
            except Exception as exc:  # httpcore2's ConnectError / ConnectTimeout: try the next address
                error = exc
        raise error or httpcore2.ConnectError(f"could not connect to {host}")

    async def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> Any:  # noqa: ASYNC109
        raise OutboundBlockedError(BLOCKED_MESSAGE)

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


@cache
def tls_context() -> ssl.SSLContext:
    """The verifying TLS context every guarded httpx2 client shares, built on first use. Loading the CA store costs
    ~21 ms of CPU, which every MCP operation (a client each) would otherwise pay again; it holds ~2.4 MB, only in a
    server that uses the Anthropic or MCP SDK (this module is imported with them)."""
    return httpx2.create_ssl_context(trust_env=False)


class GuardedTransport(httpx2.AsyncHTTPTransport):
    """httpx2's transport over a connection pool built on `GuardedBackend`."""

    def __init__(self, policy: OutboundPolicy) -> None:
        context = tls_context()
        super().__init__(verify=context, trust_env=False)
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=context,
            max_connections=MAX_CONNECTIONS,
            max_keepalive_connections=MAX_KEEPALIVE,
            keepalive_expiry=5.0,
            network_backend=GuardedBackend(policy, httpcore2.AnyIOBackend()),
        )


def guarded_client(policy: OutboundPolicy, *, timeout_s: float) -> httpx2.AsyncClient:
    """An httpx2 client for user-given URLs: policy-checked connections, no redirects, no environment proxies."""
    return httpx2.AsyncClient(
        transport=GuardedTransport(policy), timeout=timeout_s, follow_redirects=False, trust_env=False
    )
