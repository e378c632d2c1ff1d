"""aiohttp sessions whose every connection obeys the outbound policy (`memlet.net.outbound`): the HTTP stack of the
OpenAI-compatible chat and embedding clients (`memlet.llm.openai_http`), where a turn spends most of its HTTP time,
and of memlet's one-off requests (`memlet.net.fetch`: model lists, key checks, image fetches, callbacks).

A name is resolved once, by `GuardedResolver`: every address it gives must be allowed, and the connection goes to
one of those checked addresses (no second lookup a rebinding DNS server could answer differently). The URL's host
stays in the Host header and in TLS (SNI, certificate checks). aiohttp never asks the resolver about an IP literal,
so `OutboundSession.check` refuses a literal the policy refuses before any request. Redirects are not followed and
the environment's proxy settings are ignored (a proxy would be the one to connect, past this check). Connections
are kept alive and pooled per session; the session opens on first use, in the running event loop.
"""

import socket
from ipaddress import ip_address

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver
from yarl import URL

from memlet.net.outbound import BLOCKED_MESSAGE, MAX_CONNECTIONS, IPAddress, OutboundPolicy, RefusedHostError

# How long an idle pooled connection is kept (httpx's default, which the clients had before).
KEEPALIVE_S = 5.0


class OutboundRefusedError(OSError):
    """A connection the policy refused; aiohttp reports it as a connection error (the target is unreachable)."""


async def _connect_addresses(policy: OutboundPolicy, host: str, port: int) -> list[IPAddress] | None:
    """`OutboundPolicy.connect_addresses`, its refusal an OSError (which aiohttp reports as a connection error)."""
    try:
        return await policy.connect_addresses(host, port)
    except RefusedHostError:
        raise OutboundRefusedError(BLOCKED_MESSAGE) from None


class GuardedResolver(AbstractResolver):
    """Resolves a name and refuses it when any address it resolves to is not allowed; an allowed name is resolved
    as usual."""

    def __init__(self, policy: OutboundPolicy) -> None:
        self.policy = policy
        self._inner = DefaultResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        addresses = await _connect_addresses(self.policy, host, port)
        if addresses is None:
            return await self._inner.resolve(host, port, family)
        found: list[ResolveResult] = []
        for ip in addresses:
            ip_family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
            if family in (socket.AF_UNSPEC, ip_family):
                flags = socket.AI_NUMERICHOST | socket.AI_NUMERICSERV
                found.append(
                    ResolveResult(hostname=host, host=str(ip), port=port, family=ip_family, proto=0, flags=flags)
                )
        if not found:
            raise OSError(f"could not resolve {host}")
        return found

    async def close(self) -> None:
        await self._inner.close()


class OutboundSession:
    """One pooled aiohttp session, opened on first use; with a policy every connection is checked and redirects
    are not followed, without one (a client memlet points at itself) redirects are followed as the SDK did."""

    def __init__(self, policy: OutboundPolicy | None, timeout_s: float) -> None:
        self.policy = policy
        self.follow_redirects = policy is None
        self.timeout = aiohttp.ClientTimeout(total=None, connect=timeout_s, sock_read=timeout_s)
        self._session: aiohttp.ClientSession | None = None

    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            resolver = GuardedResolver(self.policy) if self.policy is not None else None
            # ssl=True: aiohttp's own verifying context (the system's CA store, as httpx2's), built when aiohttp is
            # imported; a second context would hold a second copy of the store (~3 MB).
            connector = aiohttp.TCPConnector(
                limit=MAX_CONNECTIONS, keepalive_timeout=KEEPALIVE_S, ssl=True, resolver=resolver
            )
            self._session = aiohttp.ClientSession(connector=connector, timeout=self.timeout, trust_env=False)
        return self._session

    async def check(self, url: URL) -> None:
        """Refuse a URL whose host is an IP address the policy refuses (aiohttp does not resolve literals)."""
        if self.policy is None or url.host is None:
            return
        try:
            ip_address(url.host)
        except ValueError:
            return  # a name: the resolver checks it
        await _connect_addresses(self.policy, url.host, url.port or 0)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
