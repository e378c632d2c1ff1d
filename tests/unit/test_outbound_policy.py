"""The outbound URL policy (memlet.net), the endpoint/key rules (memlet.providers.endpoints) and the bounded LLM
client pool (memlet.llm.pool)."""

import asyncio
import ipaddress
import ssl
from typing import Any

import httpx2
import pytest

from memlet.config import Settings
from memlet.llm.pool import ClientPool
from memlet.net.outbound import BlockedURLError, OutboundPolicy, is_public, parse_allowed_hosts, policy_for
from memlet.net.transport import GuardedBackend, OutboundBlockedError, guarded_client
from memlet.providers.endpoints import EndpointKey, endpoint_url, key_for, same_endpoint
from tests.api.listener import listener

NOT_PUBLIC = [
    "127.0.0.1", "127.255.255.254", "0.0.0.0", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1",
    "169.254.169.254", "100.64.0.1", "100.127.255.254", "224.0.0.1", "239.255.255.250", "255.255.255.255",
    "240.0.0.1", "192.0.2.1", "198.18.0.1",
    "::1", "::", "fe80::1", "fd00::1", "fc00::1", "ff02::1", "fec0::1", "2001:db8::1",
    "::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.0.0.1", "::127.0.0.1", "2002:7f00:1::1",
    "2002:a00:1::", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe",
]  # fmt: skip
PUBLIC = ["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "2002:808:808::"]


@pytest.mark.parametrize("address", NOT_PUBLIC)
def test_not_public(address: str) -> None:
    assert not is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", PUBLIC)
def test_public(address: str) -> None:
    assert is_public(ipaddress.ip_address(address))


class TestAllowList:
    def test_entries(self) -> None:
        policy = OutboundPolicy(parse_allowed_hosts("127.0.0.1:11434, Host.Docker.Internal ,10.0.0.0/8,[::1]:8080"))
        assert policy.admits_ip(ipaddress.ip_address("127.0.0.1"), 11434)
        assert not policy.admits_ip(ipaddress.ip_address("127.0.0.1"), 11435)
        assert not policy.admits_ip(ipaddress.ip_address("127.0.0.2"), 11434)
        assert policy.admits_ip(ipaddress.ip_address("10.9.8.7"), 1)
        assert policy.admits_ip(ipaddress.ip_address("::1"), 8080)
        assert not policy.admits_ip(ipaddress.ip_address("::1"), 8081)
        assert policy.admits_name("host.docker.internal.", 9999)
        assert not policy.admits_name("other.internal", 80)

    @pytest.mark.parametrize("entry", ["host:port", "[::1]x", "10.0.0.0/33", "a:0", "a:70000"])
    def test_bad_entry_names_itself(self, entry: str) -> None:
        with pytest.raises(ValueError, match="MEMLET_ALLOWED_HOSTS"):
            parse_allowed_hosts(f"ok.example, {entry}")

    def test_environment_providers_are_allowed_implicitly(self) -> None:
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            openai_base_url="http://127.0.0.1:9900/v1",
            ollama_base_url="http://192.168.1.5:11434",
        )
        policy = policy_for(settings)
        assert policy.admits_ip(ipaddress.ip_address("127.0.0.1"), 9900)
        assert policy.admits_ip(ipaddress.ip_address("192.168.1.5"), 11434)
        assert not policy.admits_ip(ipaddress.ip_address("127.0.0.1"), 9901)
        assert policy.admits_name("api.deepseek.com", 443)

    def test_the_exa_api_is_allowed_implicitly(self) -> None:
        local = Settings(_env_file=None, exa_base_url="http://10.0.0.7:8088")  # type: ignore[call-arg]
        assert policy_for(local).admits_ip(ipaddress.ip_address("10.0.0.7"), 8088)
        assert policy_for(Settings(_env_file=None)).admits_name("api.exa.ai", 443)  # type: ignore[call-arg]


class TestCheckUrl:
    @pytest.mark.parametrize(
        "url",
        [
            "file:///etc/passwd",
            "gopher://127.0.0.1:70/",
            "http://",
            "http://127.0.0.1:11435/",
            "http://localhost:11435/",
            "http://[::1]:11434/",
            "http://2130706433/",
            "http://0x7f.1/",
            "http://[::ffff:127.0.0.1]:11434/",
            "http://169.254.169.254/latest/meta-data/",
        ],
    )
    async def test_blocked(self, url: str) -> None:
        policy = OutboundPolicy(parse_allowed_hosts("127.0.0.1:11434"))
        with pytest.raises(BlockedURLError, match="callback_url"):
            await policy.check_url(url, "callback_url")

    async def test_allowed(self) -> None:
        policy = OutboundPolicy(parse_allowed_hosts("127.0.0.1:11434,printer.lan"))
        await policy.check_url("http://127.0.0.1:11434/v1", "f")
        await policy.check_url("HTTP://Printer.LAN/x", "f")
        await policy.check_url("https://8.8.8.8/v1", "f")


class TestGuardedTransport:
    async def test_name_resolving_to_loopback_is_refused_at_connect_time(self) -> None:
        with listener() as target:
            async with guarded_client(OutboundPolicy(), timeout_s=2) as client:
                with pytest.raises(httpx2.ConnectError):
                    await client.get(f"http://localhost:{target.port}/")
            assert target.seen == []

    async def test_allowed_address_is_reached(self) -> None:
        with listener() as target:
            policy = OutboundPolicy(parse_allowed_hosts(f"127.0.0.1:{target.port}"))
            async with guarded_client(policy, timeout_s=2) as client:
                assert (await client.get(f"{target.url}/models")).status_code == 200
            assert [s.path for s in target.seen] == ["/models"]

    async def test_clients_share_one_verifying_tls_context(self) -> None:
        """Built once (its CA store costs ~21 ms of CPU), not for every client, e.g. every MCP operation."""
        contexts = []
        for _ in range(2):
            async with guarded_client(OutboundPolicy(), timeout_s=2) as client:
                contexts.append(client._transport._pool._ssl_context)  # type: ignore[attr-defined]
        assert contexts[0] is contexts[1]
        assert contexts[0].verify_mode == ssl.CERT_REQUIRED and contexts[0].check_hostname


class TestEndpoints:
    def settings(self, **values: Any) -> Settings:
        return Settings(_env_file=None, openai_base_url="http://127.0.0.1:9900/v1", **values)  # type: ignore[call-arg]

    def test_each_type_has_its_own_default(self) -> None:
        settings = self.settings()
        assert endpoint_url({"model_endpoint_type": "openai"}, settings) == "http://127.0.0.1:9900/v1"
        assert endpoint_url({"model_endpoint_type": "ollama"}, settings) == "http://localhost:11434/v1"
        ollama = self.settings(ollama_base_url="http://ollama:11434")
        assert endpoint_url({"model_endpoint_type": "ollama"}, ollama) == "http://ollama:11434/v1"
        assert endpoint_url({"model_endpoint_type": "deepseek"}, settings) == "https://api.deepseek.com/v1"
        assert endpoint_url({"model_endpoint_type": "groq"}, settings) == "https://api.groq.com/openai/v1"
        assert endpoint_url({"model_endpoint_type": "openrouter"}, settings) == "https://openrouter.ai/api/v1"

    def test_keys_follow_the_url(self) -> None:
        keys = [EndpointKey("https://api.openai.com/v1", "sk-openai"), EndpointKey("https://api.deepseek.com", "sk-ds")]
        assert key_for("https://API.openai.com:443/v1/", keys) == "sk-openai"
        assert key_for("https://api.deepseek.com/v1", keys) == "sk-ds"
        assert key_for("https://api.openai.com.evil.example/v1", keys) is None
        assert key_for("http://api.openai.com/v1", keys) is None
        assert not same_endpoint("https://api.openai.com/v1", "https://api.openai.com/v2")


class FakeClient:
    def __init__(self) -> None:
        self.closed = False

    async def aclose(self) -> None:
        self.closed = True


class TestClientPool:
    async def test_bounded_and_closes_the_least_recently_used(self) -> None:
        pool: ClientPool[FakeClient] = ClientPool(2)
        made: dict[str, FakeClient] = {}

        def build(key: str) -> FakeClient:
            made[key] = FakeClient()
            return made[key]

        for key in ("a", "b", "a", "c"):
            async with pool.lease(key, lambda k=key: build(k)):  # type: ignore[misc]
                pass
        await asyncio.sleep(0)
        assert len(pool) == 2
        assert made["b"].closed and not made["a"].closed and not made["c"].closed

    async def test_a_leased_client_is_closed_only_when_released(self) -> None:
        pool: ClientPool[FakeClient] = ClientPool(1)
        first = FakeClient()
        async with pool.lease("first", lambda: first) as held:
            async with pool.lease("second", FakeClient):
                pass
            await asyncio.sleep(0)
            assert held is first and not first.closed  # evicted while in use: kept open
        await asyncio.sleep(0)
        assert first.closed
        await pool.aclose()


class FixedDNS(OutboundPolicy):
    """A policy whose resolver answers from a table (a name's answer can change between calls: rebinding)."""

    answers: dict[str, list[list[str]]] = {}

    async def addresses(self, host: str, port: int) -> list[Any] | None:
        queue = self.answers.get(host)
        return [ipaddress.ip_address(a) for a in queue.pop(0)] if queue else None


class RecordingBackend:
    def __init__(self) -> None:
        self.hosts: list[str] = []

    async def connect_tcp(self, host: str, port: int, *args: Any) -> str:
        self.hosts.append(host)
        return "stream"


class TestRebinding:
    async def test_connects_to_the_address_it_checked(self) -> None:
        FixedDNS.answers = {"rebind.example": [["8.8.8.8"], ["127.0.0.1"]]}
        inner = RecordingBackend()
        backend = GuardedBackend(FixedDNS(), inner)
        assert await backend.connect_tcp("rebind.example", 443) == "stream"
        assert inner.hosts == ["8.8.8.8"]  # the checked address, not the name (which now points at loopback)
        with pytest.raises(OutboundBlockedError):
            await backend.connect_tcp("rebind.example", 443)
        assert inner.hosts == ["8.8.8.8"]

    async def test_one_private_answer_refuses_the_name(self) -> None:
        FixedDNS.answers = {"mixed.example": [["8.8.8.8", "10.0.0.1"]]}
        inner = RecordingBackend()
        backend = GuardedBackend(FixedDNS(), inner)
        with pytest.raises(OutboundBlockedError):
            await backend.connect_tcp("mixed.example", 80)
        assert inner.hosts == []
