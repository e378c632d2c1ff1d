"""Issue #10 item 3: Letta's legacy `/v1/tools/mcp/servers` routes (servers by name), the connect event streams,
and the OAuth flow against an MCP server that demands authorization (`tests/mcp_servers/oauth_server.py`)."""

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.api.mcp_fixtures import DEMO_TOOLS, HttpDemo, http_demo, mcp_client, mcp_http, mcp_server
from tests.conftest import free_port
from tests.mcp_servers.oauth_server import ACCESS_TOKEN, State, serve

__all__ = ["http_demo", "mcp_client", "mcp_http", "mcp_server"]


def _events(http: httpx.Client, method: str, path: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
    with http.stream(method, path, **kwargs) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data: "):
                yield json.loads(line[len("data: ") :])


class TestLegacyRoutes:
    def test_by_name_lifecycle(self, mcp_http: httpx.Client, http_demo: HttpDemo) -> None:
        config = {"server_name": "legacy", "type": "streamable_http", "server_url": http_demo.streamable_http}
        added = mcp_http.put("/v1/tools/mcp/servers", json=config)
        assert added.status_code == 200 and [c["server_name"] for c in added.json()] == ["legacy"]
        listed = mcp_http.get("/v1/tools/mcp/servers").json()
        assert listed["legacy"]["type"] == "streamable_http" and listed["legacy"]["server_url"] == config["server_url"]

        live = {t["name"]: t for t in mcp_http.get("/v1/tools/mcp/servers/legacy/tools").json()}
        assert set(live) >= DEMO_TOOLS and "inputSchema" in live["create_person"]
        assert live["echo"]["health"] == {"status": "STRICT_COMPLIANT", "reasons": []}
        assert live["search_with_filters"]["health"]["status"] == "NON_STRICT_ONLY"

        run = mcp_http.post("/v1/tools/mcp/servers/legacy/tools/echo/execute", json={"args": {"message": "hi"}})
        assert run.json() == {"result": "Echo: hi", "success": True}
        assert mcp_http.post("/v1/tools/mcp/servers/legacy/resync").json() == {
            "deleted": [],
            "updated": [],
            "added": [],
        }
        tool = mcp_http.post("/v1/tools/mcp/servers/legacy/echo").json()
        assert tool["name"] == "echo" and tool["tool_type"] == "external_mcp"
        assert mcp_http.post("/v1/tools/mcp/servers/legacy/nope").status_code == 404

        renamed = mcp_http.patch("/v1/tools/mcp/servers/legacy", json={"server_name": "legacy2", "auth_token": "t0k"})
        assert renamed.status_code == 200 and renamed.json()["server_name"] == "legacy2"
        assert renamed.json()["auth_token"] == "Bearer ********"
        missing = mcp_http.patch("/v1/tools/mcp/servers/legacy", json={"server_name": "x"})
        assert missing.status_code == 404 and missing.json()["detail"]["code"] == "MCPServerNotFoundError"
        assert mcp_http.delete("/v1/tools/mcp/servers/legacy2").json() == []
        assert mcp_http.get("/v1/tools/", params={"name": "echo"}).json() == []  # its tools went with it

    def test_test_and_connect_do_not_store(self, mcp_http: httpx.Client, http_demo: HttpDemo) -> None:
        config = {"server_name": "probe", "type": "sse", "server_url": http_demo.sse}
        tested = mcp_http.post("/v1/tools/mcp/servers/test", json=config).json()
        assert tested["status"] == "success" and {t["name"] for t in tested["tools"]} >= DEMO_TOOLS
        events = list(_events(mcp_http, "POST", "/v1/tools/mcp/servers/connect", json=config))
        assert [e["event"] for e in events] == ["connection_attempt", "success"]
        assert {t["name"] for t in events[1]["tools"]} >= DEMO_TOOLS
        assert mcp_http.get("/v1/tools/mcp/servers").json() == {}

    def test_connect_by_id(self, mcp_http: httpx.Client, http_demo: HttpDemo) -> None:
        config = {"mcp_server_type": "streamable_http", "server_url": http_demo.streamable_http}
        server = mcp_http.post("/v1/mcp-servers/", json={"server_name": "c", "config": config}).json()
        events = list(_events(mcp_http, "GET", f"/v1/mcp-servers/connect/{server['id']}"))
        assert [e["event"] for e in events] == ["connection_attempt", "success"]


@pytest.fixture
def oauth_demo() -> Iterator[tuple[str, State]]:
    port = free_port()
    with serve(port) as state:
        yield f"http://127.0.0.1:{port}/mcp", state


class TestOAuth:
    def test_authorize_through_the_callback(self, mcp_http: httpx.Client, oauth_demo: tuple[str, State]) -> None:
        url, state = oauth_demo
        config = {"mcp_server_type": "streamable_http", "server_url": url}
        server = mcp_http.post("/v1/mcp-servers/", json={"server_name": "guarded", "config": config}).json()
        assert mcp_http.get(f"/v1/mcp-servers/{server['id']}/tools").json() == []  # 401: no tools yet
        seen: list[str] = []
        for event in _events(mcp_http, "GET", f"/v1/mcp-servers/connect/{server['id']}"):
            seen.append(event["event"])
            if event["event"] == "authorization_url":
                assert event["session_id"].startswith("mcp-oauth-")
                query = parse_qs(urlsplit(event["url"]).query)
                assert query["redirect_uri"][0].endswith("/v1/tools/mcp/oauth/callback")
                params = {"code": "c0de-1", "state": query["state"][0]}
                answer = mcp_http.get("/v1/tools/mcp/oauth/callback", params=params).json()
                assert answer["status"] == "success" and answer["server_url"] == url
            if event["event"] == "success":
                assert {t["name"] for t in event["tools"]} >= DEMO_TOOLS
        assert seen == ["connection_attempt", "oauth_required", "authorization_url", "waiting_for_auth", "success"]
        assert state.codes == ["c0de-1"] and state.registered
        # The token is kept (sealed, masked) and used from then on.
        changed = mcp_http.patch(f"/v1/mcp-servers/{server['id']}/refresh").json()
        assert set(changed["added"]) >= DEMO_TOOLS
        body = mcp_http.get(f"/v1/mcp-servers/{server['id']}").text
        assert ACCESS_TOKEN not in body and json.loads(body)["auth_token"] == "Bearer ********"

    def test_a_server_created_after_a_legacy_authorization_uses_it(
        self, mcp_http: httpx.Client, oauth_demo: tuple[str, State]
    ) -> None:
        url, _state = oauth_demo
        config = {"server_name": "later", "type": "streamable_http", "server_url": url}
        seen = []
        for event in _events(mcp_http, "POST", "/v1/tools/mcp/servers/connect", json=config):
            seen.append(event["event"] + str(event.get("message", "")))
            if event["event"] == "authorization_url":
                state = parse_qs(urlsplit(event["url"]).query)["state"][0]
                mcp_http.get("/v1/tools/mcp/oauth/callback", params={"code": "c0de-2", "state": state})
        assert seen[-1] == "success", seen
        assert mcp_http.get("/v1/tools/mcp/servers").json() == {}  # connect stores no server
        created = {"server_name": "later", "config": {"mcp_server_type": "streamable_http", "server_url": url}}
        server = mcp_http.post("/v1/mcp-servers/", json=created).json()
        assert server["auth_token"] == "Bearer ********"
        assert {t["name"] for t in mcp_http.get(f"/v1/mcp-servers/{server['id']}/tools").json()} >= DEMO_TOOLS
        mcp_http.delete(f"/v1/mcp-servers/{server['id']}")
        again = mcp_http.post("/v1/mcp-servers/", json=created).json()  # its authorization went with it
        assert again["auth_token"] is None

    def test_callback_errors_are_200_bodies(self, mcp_http: httpx.Client) -> None:
        callback = "/v1/tools/mcp/oauth/callback"
        assert mcp_http.get(callback).json()["status"] == "error"
        unknown = mcp_http.get(callback, params={"code": "x", "state": "nope"})
        assert unknown.status_code == 200 and unknown.json() == {
            "status": "error",
            "message": "Invalid or expired OAuth session",
        }
