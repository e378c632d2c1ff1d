"""Which user-given URLs memlet may call: run callbacks, provider base URLs, agents' model and embedding endpoints.

The rule: http or https only, and every address the host resolves to must be publicly routable. Loopback,
link-local (169.254/16, fe80::/10), private (10/8, 172.16/12, 192.168/16), shared CGNAT space (100.64/10), unique
local (fc00::/7), multicast, unspecified and reserved addresses are refused, also when written as IPv4-mapped,
6to4 or NAT64 IPv6 addresses. Exceptions:

- `MEMLET_ALLOWED_HOSTS`: comma-separated hostnames, IP addresses or CIDR blocks, each optionally with `:port`
  (`127.0.0.1:11434`, `host.docker.internal`, `10.0.0.0/8`, `[::1]:8080`). An allowed hostname is trusted
  whatever it resolves to; an allowed address or block admits exactly those addresses.
- the environment's own providers (OPENAI_BASE_URL, OLLAMA_BASE_URL, VLLM_API_BASE, ...), the Exa API the web tools use
  (MEMLET_EXA_BASE_URL) and the official endpoints memlet knows by default (DeepSeek, Letta's free endpoint, ...),
  each for its own host and port.

The policy is applied twice: `check_url` when a URL is stored (a 400 naming the field), and again when a
connection is opened (`connect_addresses`, for `memlet.net.aio` and `memlet.net.transport`), so a name that
re-resolves elsewhere later is still refused.
"""

import asyncio
import ipaddress
import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

from memlet.config import Settings
from memlet.errors import BadRequestError
from memlet.log import get_logger

log = get_logger("net.outbound")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

DEFAULT_PORTS = {"http": 80, "https": 443}
# Endpoints memlet itself points at by default; they are public services, allowed without a DNS lookup.
OFFICIAL_ENDPOINTS = (
    "https://api.openai.com/v1",
    "https://api.anthropic.com/v1",
    "https://api.deepseek.com/v1",
    "https://inference.letta.com/v1",
    "https://api.groq.com/openai/v1",
    "https://api.together.xyz/v1",
    "https://api.x.ai/v1",
    "https://openrouter.ai/api/v1",
    "https://api.z.ai/api/paas/v4",
    "https://api.mistral.ai/v1",
    "https://api.cerebras.ai/v1",
    "https://api.fireworks.ai/inference/v1",
    "https://api.moonshot.ai/v1",
    "https://api.minimax.io/anthropic",
    "https://inference.baseten.co/v1",
)
# Ranges Python's `is_global` does not refuse on every supported version.
_ALWAYS_BLOCKED: tuple[IPNetwork, ...] = tuple(
    ipaddress.ip_network(n)
    for n in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "224.0.0.0/4",
        "240.0.0.0/4",
        "::/8",
        "64:ff9b:1::/48",
        "fc00::/7",
        "fe80::/10",
        "fec0::/10",
        "ff00::/8",
    )
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
RESOLVE_TIMEOUT_S = 5.0
BLOCKED_MESSAGE = "connection refused by memlet's outbound URL policy"
# As many connections per client as the OpenAI SDK's own default pool allowed.
MAX_CONNECTIONS = 1000


class RefusedHostError(Exception):
    """A connection the policy refuses: the host is, or resolves to, an address that is not allowed."""


class BlockedURLError(BadRequestError):
    """A user-given URL the outbound policy refuses (400 in Letta's shape)."""


def _embedded_v4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one stands for (mapped ::ffff:a.b.c.d, 6to4 2002::/16, NAT64 64:ff9b::/96)."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def is_public(ip: IPAddress) -> bool:
    """True when `ip` is a globally routable unicast address (and so is any IPv4 address it embeds)."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            return False
        embedded = _embedded_v4(ip)
        if embedded is not None:  # it reaches the IPv4 address it embeds: judge that one
            return is_public(embedded)
    if any(ip in net for net in _ALWAYS_BLOCKED if net.version == ip.version):
        return False
    flags = (ip.is_private, ip.is_loopback, ip.is_link_local, ip.is_multicast, ip.is_reserved, ip.is_unspecified)
    return ip.is_global and not any(flags)


@dataclass(frozen=True)
class AllowRule:
    """One allow-list entry: a hostname or an address block, on one port or (None) on every port."""

    host: str | None = None
    network: IPNetwork | None = None
    port: int | None = None

    def admits_name(self, host: str, port: int) -> bool:
        return self.host is not None and self.host == host and self.port in (None, port)

    def admits_ip(self, ip: IPAddress, port: int) -> bool:
        return (
            self.network is not None
            and ip.version == self.network.version
            and ip in self.network
            and (self.port in (None, port))
        )


def _norm_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def _host_rule(host: str, port: int | None) -> AllowRule:
    host = _norm_host(host)
    try:
        return AllowRule(network=ipaddress.ip_network(host), port=port)
    except ValueError:
        return AllowRule(host=host, port=port)


def parse_rule(entry: str) -> AllowRule:
    """One `MEMLET_ALLOWED_HOSTS` entry: `host`, `host:port`, `1.2.3.4`, `[::1]:8080`, `10.0.0.0/8`, `fd00::/8`."""
    entry = entry.strip()
    if not entry:
        raise ValueError("empty entry")
    if "/" in entry:
        return AllowRule(network=ipaddress.ip_network(entry.strip("[]"), strict=False))
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        port = int(rest[1:]) if rest.startswith(":") else None
        if rest and port is None:
            raise ValueError(f"bad entry {entry!r}")
        return _host_rule(host, port)
    if entry.count(":") == 1:
        host, port_text = entry.split(":")
        if not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise ValueError(f"bad port in {entry!r}")
        return _host_rule(host, int(port_text))
    return _host_rule(entry, None)


def parse_allowed_hosts(text: str) -> tuple[AllowRule, ...]:
    """The rules of a comma-separated `MEMLET_ALLOWED_HOSTS`; a malformed entry is a ValueError naming it."""
    rules = []
    for entry in text.split(","):
        if entry.strip():
            try:
                rules.append(parse_rule(entry))
            except ValueError as exc:
                raise ValueError(f"MEMLET_ALLOWED_HOSTS: cannot read {entry.strip()!r} ({exc})") from exc
    return tuple(rules)


def url_target(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) URL with a host, else None."""
    try:
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        port = parts.port or DEFAULT_PORTS.get(scheme)
    except ValueError:
        return None
    if scheme not in DEFAULT_PORTS or not parts.hostname or port is None:
        return None
    return scheme, _norm_host(parts.hostname), port


def _implicit_rules(urls: Iterable[str | None]) -> tuple[AllowRule, ...]:
    rules = []
    for url in urls:
        target = url_target(url) if url else None
        if target is not None:
            rules.append(_host_rule(target[1], target[2]))
    return tuple(rules)


@dataclass(frozen=True)
class OutboundPolicy:
    """The allow-list and the checks; build it with `policy_for(settings)`."""

    rules: tuple[AllowRule, ...] = ()

    def admits_name(self, host: str, port: int) -> bool:
        """True when `host:port` is allowed by name (no address check needed)."""
        return any(r.admits_name(_norm_host(host), port) for r in self.rules)

    def admits_ip(self, ip: IPAddress, port: int) -> bool:
        """True when a connection to `ip:port` is allowed."""
        return is_public(ip) or any(r.admits_ip(ip, port) for r in self.rules)

    async def addresses(self, host: str, port: int) -> list[IPAddress] | None:
        """Every address `host` resolves to (a literal is itself); None when it does not resolve."""
        try:
            return [ipaddress.ip_address(_norm_host(host))]
        except ValueError:
            pass
        loop = asyncio.get_running_loop()
        try:
            infos = await asyncio.wait_for(
                loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), timeout=RESOLVE_TIMEOUT_S
            )
        except (OSError, TimeoutError, UnicodeError):
            return None
        found: list[IPAddress] = []
        for info in infos:
            ip = ipaddress.ip_address(str(info[4][0]).split("%")[0])
            if ip not in found:
                found.append(ip)
        return found

    def refused(self, addresses: Sequence[IPAddress], port: int) -> list[IPAddress]:
        """The addresses of `addresses` a connection may not go to."""
        return [ip for ip in addresses if not self.admits_ip(ip, port)]

    async def connect_addresses(self, host: str, port: int) -> list[IPAddress] | None:
        """Where a connection to `host:port` may go: None when the name itself is allowed (connect as usual), else
        the addresses it resolves to, every one allowed (empty: it does not resolve). Raises `RefusedHostError`,
        logged, when any is not; the caller connects only to the addresses returned (no second lookup)."""
        if self.admits_name(host, port):
            return None
        addresses = await self.addresses(host, port) or []
        if refused := self.refused(addresses, port):
            log.warning(
                "outbound connection refused: %s:%s resolves to a non-public address (%s); "
                "MEMLET_ALLOWED_HOSTS can allow it",
                host,
                port,
                ", ".join(map(str, refused)),
            )
            raise RefusedHostError(host)
        return addresses

    async def check_url(self, url: str, field: str) -> None:
        """Raise `BlockedURLError` (400) when `url`, given for `field`, may not be called.

        A name that does not resolve now is accepted: it reaches nothing, and the connection is checked again.
        """
        target = url_target(url)
        if target is None:
            raise BlockedURLError(
                f"INVALID_ARGUMENT: {field} must be an http:// or https:// URL with a host; got {url!r}"
            )
        _, host, port = target
        if self.admits_name(host, port):
            return
        addresses = await self.addresses(host, port)
        if addresses and self.refused(addresses, port):
            hint = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
            raise BlockedURLError(
                f"INVALID_ARGUMENT: {field} {url!r} is not allowed: memlet only calls public addresses, and "
                f"this host is loopback, private, link-local or otherwise not public. An operator can allow it "
                f"with MEMLET_ALLOWED_HOSTS={hint}"
            )


@lru_cache(maxsize=16)
def _policy(allowed_hosts: str, implicit: tuple[str | None, ...]) -> OutboundPolicy:
    return OutboundPolicy(parse_allowed_hosts(allowed_hosts) + _implicit_rules(implicit))


def policy_for(settings: Settings) -> OutboundPolicy:
    """The policy of these settings: the operator's allow-list plus the environment's own providers and Exa."""
    implicit = (
        settings.openai_base_url,
        settings.anthropic_base_url,
        settings.ollama_base_url,
        settings.vllm_api_base,
        settings.sglang_api_base,
        settings.lmstudio_base_url,
        settings.zai_base_url,
        settings.exa_base_url,
        *OFFICIAL_ENDPOINTS,
    )
    return _policy(settings.allowed_hosts, implicit)
