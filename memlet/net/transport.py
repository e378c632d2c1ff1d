"""An httpx client whose every connection obeys the outbound policy (`memlet.net.outbound`).

DNS rebinding: the check and the connection use the same lookup. The network backend resolves the host itself,
refuses the connection when any address it got is not allowed, and connects to one of those checked addresses.
The URL's host stays in the Host header and in TLS (SNI and certificate checks), because httpcore takes those
from the request, not from the socket. Redirects are not followed, and proxy settings from the environment are
ignored (a proxy would be the one to connect, past this check).
"""

from collections.abc import Iterable
from typing import Any

import httpcore
import httpcore2
import httpx
import httpx2

from memlet.log import get_logger
from memlet.net.outbound import OutboundPolicy

log = get_logger("net.transport")

BLOCKED_MESSAGE = "connection refused by memlet's outbound URL policy"
# As many connections as the OpenAI SDK's own default pool allowed.
MAX_CONNECTIONS, MAX_KEEPALIVE = 1000, 100


class OutboundBlockedError(httpcore.ConnectError):
    """A connection the policy refused (httpx reports it as a ConnectError: the target is unreachable)."""


class OutboundBlockedError2(httpcore2.ConnectError):
    """The same for httpx2, the HTTP stack of the LLM clients."""


class GuardedBackend:
    """A network backend (httpcore or httpcore2) that resolves, checks, then connects to a checked address.

    `blocked` and `connect_error` are the exception types of the backend's HTTP stack, so httpx maps them to
    its own ConnectError. Unix sockets are refused.
    """

    def __init__(
        self, policy: OutboundPolicy, inner: Any, blocked: type[Exception], connect_error: type[Exception]
    ) -> None:
        self.policy = policy
        self.inner = inner
        self.blocked = blocked
        self.connect_error = connect_error

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (the backend interface passes it)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> Any:
        if self.policy.admits_name(host, port):
            return await self.inner.connect_tcp(host, port, timeout, local_address, socket_options)
        addresses = await self.policy.addresses(host, port)
        if not addresses:
            raise self.connect_error(f"could not resolve {host}")
        if refused := self.policy.refused(addresses, port):
            log.warning(
                "outbound connection refused: %s:%s resolves to a non-public address (%s); "
                "MEMLET_ALLOWED_HOSTS can allow it",
                host,
                port,
                ", ".join(map(str, refused)),
            )
            raise self.blocked(BLOCKED_MESSAGE)
        error: Exception | None = None
        for ip in addresses:
            try:
                return await self.inner.connect_tcp(str(ip), port, timeout, local_address, socket_options)
            except Exception as exc:  # the stack's ConnectError / ConnectTimeout: try the next address
                error = exc
        raise error or self.connect_error(f"could not connect to {host}")

    async def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> Any:  # noqa: ASYNC109
        raise self.blocked(BLOCKED_MESSAGE)

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport over a connection pool built on `GuardedBackend`."""

    def __init__(self, policy: OutboundPolicy) -> None:
        super().__init__(trust_env=False)
        self._pool = _guarded_pool(policy, httpcore, httpx, OutboundBlockedError)


class GuardedTransport2(httpx2.AsyncHTTPTransport):
    """The same for httpx2 (the LLM clients' HTTP stack)."""

    def __init__(self, policy: OutboundPolicy) -> None:
        super().__init__(trust_env=False)
        self._pool = _guarded_pool(policy, httpcore2, httpx2, OutboundBlockedError2)


def _guarded_pool(policy: OutboundPolicy, core: Any, client_lib: Any, blocked: type[Exception]) -> Any:
    """A connection pool of `core` (httpcore or httpcore2) whose network backend checks every connection."""
    backend = GuardedBackend(policy, core.AnyIOBackend(), blocked, core.ConnectError)
    return core.AsyncConnectionPool(
        ssl_context=client_lib.create_ssl_context(trust_env=False),
        max_connections=MAX_CONNECTIONS,
        max_keepalive_connections=MAX_KEEPALIVE,
        keepalive_expiry=5.0,
        network_backend=backend,
    )


def guarded_client(policy: OutboundPolicy, *, timeout_s: float) -> httpx.AsyncClient:
    """An httpx client for user-given URLs: policy-checked connections, no redirects, no environment proxies."""
    return httpx.AsyncClient(
        transport=GuardedTransport(policy), timeout=timeout_s, follow_redirects=False, trust_env=False
    )


def guarded_sdk_client(policy: OutboundPolicy, *, timeout_s: float) -> httpx2.AsyncClient:
    """The same as an httpx2 client, for the LLM and embedding clients (`memlet.llm.openai_http`, Anthropic's SDK)."""
    return httpx2.AsyncClient(
        transport=GuardedTransport2(policy), timeout=timeout_s, follow_redirects=False, trust_env=False
    )
