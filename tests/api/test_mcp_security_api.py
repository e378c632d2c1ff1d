"""Issue #10 item 3: MCP servers are refused where memlet's outbound-URL policy refuses a URL (loopback, [::1],
metadata, localhost, a name resolving to a private address, other schemes) unless MEMLET_ALLOWED_HOSTS lists the
host; stdio servers are off unless MEMLET_MCP_STDIO=true."""

import ipaddress
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from memlet.net.outbound import OutboundPolicy
from tests.api.listener import Listener, listener
from tests.api.mcp_fixtures import HttpDemo, http_demo, mcp_client, mcp_http, mcp_server, stdio_config

__all__ = ["http_demo", "mcp_client", "mcp_http", "mcp_server"]
PRIVATE_NAME = "internal.example"


@pytest.fixture
def victim() -> Iterator[Listener]:
    """A loopback service nobody allowed: it must never see a request."""
    with listener() as server:
        yield server


@pytest.fixture
def private_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    """DNS answers 10.0.0.1 for `internal.example` (the live server runs in this process, on uvloop, whose
    resolver a patched `socket.getaddrinfo` would not reach, so the policy's lookup is the one answered)."""
    real = OutboundPolicy.addresses

    async def fake(self: OutboundPolicy, host: str, port: int) -> Any:
        if host == PRIVATE_NAME:
            return [ipaddress.ip_address("10.0.0.1")]
        return await real(self, host, port)

    monkeypatch.setattr(OutboundPolicy, "addresses", fake)


def _blocked(port: int) -> list[str]:
    return [
        f"http://127.0.0.1:{port}/mcp",
        f"http://[::1]:{port}/mcp",
        "http://169.254.169.254/latest/meta-data",
        f"http://localhost:{port}/mcp",
        f"http://{PRIVATE_NAME}/mcp",
        "ftp://example.com/mcp",
    ]


@pytest.mark.usefixtures("private_dns")
def test_blocked_urls_are_refused_without_an_allow_list_entry(http: httpx.Client, victim: Listener) -> None:
    for url in _blocked(victim.port):
        for kind in ("streamable_http", "sse"):
            body = {"server_name": "evil", "config": {"mcp_server_type": kind, "server_url": url}}
            response = http.post("/v1/mcp-servers/", json=body)
            assert response.status_code == 400, (url, response.text)
            assert "server_url" in response.json()["detail"]
            legacy = {"server_name": "evil", "type": kind, "server_url": url}
            assert http.put("/v1/tools/mcp/servers", json=legacy).status_code == 400, url
            assert http.post("/v1/tools/mcp/servers/test", json=legacy).status_code == 400, url
    assert http.get("/v1/mcp-servers/").json() == []
    assert victim.seen == []


def test_an_update_cannot_point_a_server_at_a_blocked_url(http: httpx.Client, victim: Listener) -> None:
    config = {"mcp_server_type": "sse", "server_url": "https://mcp.invalid/sse"}
    server = http.post("/v1/mcp-servers/", json={"server_name": "public", "config": config}).json()
    for url in _blocked(victim.port)[:4]:
        update = {"config": {"mcp_server_type": "sse", "server_url": url}}
        assert http.patch(f"/v1/mcp-servers/{server['id']}", json=update).status_code == 400, url
    assert http.get(f"/v1/mcp-servers/{server['id']}").json()["server_url"] == "https://mcp.invalid/sse"
    assert victim.seen == []


def test_stdio_is_off_by_default(http: httpx.Client) -> None:
    response = http.post("/v1/mcp-servers/", json={"server_name": "local", "config": stdio_config()})
    assert response.status_code == 400 and "MEMLET_MCP_STDIO" in response.json()["detail"]
    legacy = {"server_name": "local", "type": "stdio", "command": "python", "args": []}
    assert http.put("/v1/tools/mcp/servers", json=legacy).status_code == 400
    assert http.post("/v1/tools/mcp/servers/test", json=legacy).status_code == 400
    assert http.get("/v1/mcp-servers/").json() == []


def test_the_allow_list_admits_a_local_server(mcp_http: httpx.Client, http_demo: HttpDemo) -> None:
    """The same loopback address works on a server whose MEMLET_ALLOWED_HOSTS lists 127.0.0.1."""
    config = {"mcp_server_type": "streamable_http", "server_url": http_demo.streamable_http}
    created = mcp_http.post("/v1/mcp-servers/", json={"server_name": "local", "config": config})
    assert created.status_code == 200, created.text
    assert len(mcp_http.get(f"/v1/mcp-servers/{created.json()['id']}/tools").json()) > 0
