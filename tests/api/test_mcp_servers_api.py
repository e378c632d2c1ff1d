"""Issue #10 item 3: MCP servers through `/v1/mcp-servers` (letta-client's `mcp_servers`) against real MCP servers
built with the official SDK (stdio, streamable HTTP and SSE on 127.0.0.1, allowed by MEMLET_ALLOWED_HOSTS)."""

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from letta_client import Letta
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from memlet.db.engine import async_url
from tests.api.mcp_fixtures import (
    CALL_TIMEOUT_S,
    DEMO_TOOLS,
    ENCRYPTION_KEY,
    HttpDemo,
    http_demo,
    mcp_client,
    mcp_http,
    mcp_server,
    stdio_config,
)

__all__ = ["http_demo", "mcp_client", "mcp_http", "mcp_server"]
LEAK_VAR = "MEMLET_TEST_PROCESS_SECRET"


def _tools(client: Letta, server_id: str) -> dict[str, Any]:
    return {t.name: t for t in client.mcp_servers.tools.list(server_id)}


def _walk(node: Any) -> list[Any]:
    found = [node]
    if isinstance(node, dict):
        for value in node.values():
            found += _walk(value)
    elif isinstance(node, list):
        for value in node:
            found += _walk(value)
    return found


class TestDiscovery:
    def test_stdio_server_nine_tools_with_nested_schemas(self, mcp_client: Letta) -> None:
        server = mcp_client.mcp_servers.create(server_name="demo", config=stdio_config())
        assert server.mcp_server_type == "stdio" and server.server_name == "demo"
        tools = _tools(mcp_client, server.id)
        assert set(tools) == DEMO_TOOLS
        for tool in tools.values():
            assert tool.tool_type == "external_mcp" and tool.tags == ["mcp:demo"]
            assert tool.metadata["mcp"]["server_id"] == server.id
            schema = tool.json_schema or {}
            assert not any(isinstance(n, dict) and ("$ref" in n or "$defs" in n) for n in _walk(schema)), tool.name
        person = tools["create_person"].json_schema["parameters"]["properties"]["person"]
        address = next(m for m in person["properties"]["address"]["anyOf"] if m.get("type") == "object")
        assert set(address["properties"]) == {"street", "city", "zip_code"} and person["required"] == ["name", "age"]
        limits = tools["process_nested_data"].json_schema["parameters"]["properties"]["data"]["properties"]["limits"]
        items = next(m for m in limits["anyOf"] if m.get("type") == "array")["items"]
        assert set(items["properties"]) == {"key", "values"}
        assert mcp_client.mcp_servers.tools.retrieve(tools["echo"].id, mcp_server_id=server.id).name == "echo"
        assert [s.id for s in mcp_client.mcp_servers.list()] == [server.id]

    @pytest.mark.parametrize("kind", ["streamable_http", "sse"])
    def test_http_servers_discover_and_run(self, mcp_client: Letta, http_demo: HttpDemo, kind: str) -> None:
        url = getattr(http_demo, kind)
        config = {"mcp_server_type": kind, "server_url": url}
        server = mcp_client.mcp_servers.create(server_name=f"demo-{kind}", config=config)
        assert server.mcp_server_type == kind and server.server_url == url
        tools = _tools(mcp_client, server.id)
        assert set(tools) >= DEMO_TOOLS
        result = mcp_client.mcp_servers.tools.run(tools["add"].id, mcp_server_id=server.id, args={"a": 2, "b": 3})
        assert result.status == "success" and result.func_return == "Result: 5"
        bad = mcp_client.mcp_servers.tools.run(tools["add"].id, mcp_server_id=server.id, args={"a": "x"})
        assert bad.status == "error" and "add" in str(bad.func_return)

    def test_servers_of_the_same_tools_do_not_clobber(self, mcp_client: Letta, http_demo: HttpDemo) -> None:
        custom = mcp_client.tools.create(
            source_code='def echo(message: str) -> str:\n    """Mine.\n\n    Args:\n        message: text\n    """\n    return message\n'
        )
        http = {"mcp_server_type": "streamable_http", "server_url": http_demo.streamable_http}
        first = mcp_client.mcp_servers.create(server_name="one", config=http)
        second = mcp_client.mcp_servers.create(server_name="two", config=http)
        one, two = _tools(mcp_client, first.id), _tools(mcp_client, second.id)
        assert "one__echo" in one and "two__echo" in two and "add" in one and "two__add" in two
        assert mcp_client.tools.retrieve(custom.id).tool_type == "custom"  # the custom echo was not overwritten
        result = mcp_client.mcp_servers.tools.run(two["two__echo"].id, mcp_server_id=second.id, args={"message": "x"})
        assert result.func_return == "Echo: x"

    def test_refresh_reports_added_and_deleted(self, mcp_client: Letta, tmp_path: Path) -> None:
        switch = tmp_path / "tools"
        switch.write_text("none")
        server = mcp_client.mcp_servers.create(server_name="switch", config=stdio_config("--tools-file", str(switch)))
        assert _tools(mcp_client, server.id) == {}
        switch.write_text("all")
        changed = mcp_client.mcp_servers.refresh(server.id)
        assert set(changed["added"]) == DEMO_TOOLS and changed["deleted"] == []  # type: ignore[index]
        switch.write_text("none")
        changed = mcp_client.mcp_servers.refresh(server.id)
        assert set(changed["deleted"]) == DEMO_TOOLS and changed["added"] == []  # type: ignore[index]
        assert _tools(mcp_client, server.id) == {}


class TestFailures:
    def test_a_server_that_sleeps_past_the_deadline_fails_the_call(
        self, mcp_client: Letta, mcp_http: httpx.Client, http_demo: HttpDemo
    ) -> None:
        config = {"mcp_server_type": "sse", "server_url": http_demo.sse}
        server = mcp_client.mcp_servers.create(server_name="slow", config=config)
        slow = _tools(mcp_client, server.id)["slow_tool"]
        started = time.monotonic()
        response = mcp_http.post(f"/v1/mcp-servers/{server.id}/tools/{slow.id}/run", json={"args": {"seconds": 60}})
        assert response.status_code == 408, response.text
        assert response.json()["detail"].startswith("TIMEOUT:")
        assert time.monotonic() - started < CALL_TIMEOUT_S + 10

    def test_an_error_the_server_answers_is_the_tools_failed_result(
        self, mcp_client: Letta, mcp_http: httpx.Client, http_demo: HttpDemo
    ) -> None:
        config = {"mcp_server_type": "streamable_http", "server_url": http_demo.streamable_http}
        server = mcp_client.mcp_servers.create(server_name="refusing", config=config)
        refuse = _tools(mcp_client, server.id)["refuse"]
        result = mcp_client.mcp_servers.tools.run(refuse.id, mcp_server_id=server.id, args={"reason": "no"})
        assert result.status == "error" and result.func_return == "refused: no"
        legacy = mcp_http.post("/v1/tools/mcp/servers/refusing/tools/refuse/execute", json={"args": {"reason": "x"}})
        assert legacy.status_code == 200 and legacy.json() == {"result": "refused: x", "success": False}

    def test_a_server_that_exits_at_start(self, mcp_client: Letta, mcp_http: httpx.Client) -> None:
        server = mcp_client.mcp_servers.create(server_name="dead", config=stdio_config("--exit"))
        assert _tools(mcp_client, server.id) == {}  # kept, with no tools, as Letta does
        response = mcp_http.patch(f"/v1/mcp-servers/{server.id}/refresh")
        assert response.status_code == 404
        assert response.json()["detail"]["code"] == "MCPServerUnavailable"
        legacy = mcp_http.post(
            "/v1/tools/mcp/servers/test", json={"server_name": "dead", **_legacy(stdio_config("--exit"))}
        )
        assert legacy.status_code == 502 and legacy.json()["error"]["type"] == "mcp_connection_error"

    def test_unknown_ids_are_404(self, mcp_client: Letta, mcp_http: httpx.Client) -> None:
        missing = "mcp_server-00000000-0000-4000-8000-000000000000"
        for method, path in (("GET", ""), ("PATCH", "/refresh"), ("DELETE", ""), ("GET", "/tools")):
            assert mcp_http.request(method, f"/v1/mcp-servers/{missing}{path}").status_code == 404
        server = mcp_client.mcp_servers.create(server_name="a", config=stdio_config("--no-tools"))
        custom = mcp_client.tools.create(source_code='def mine() -> str:\n    """Mine."""\n    return "x"\n')
        assert mcp_http.get(f"/v1/mcp-servers/{server.id}/tools/{custom.id}").status_code == 404

    def test_names_are_unique_and_types_fixed(self, mcp_http: httpx.Client) -> None:
        config = {"mcp_server_type": "sse", "server_url": "https://mcp.invalid/sse"}
        first = mcp_http.post("/v1/mcp-servers/", json={"server_name": "same", "config": config}).json()
        other = mcp_http.post("/v1/mcp-servers/", json={"server_name": "other", "config": config}).json()
        assert mcp_http.post("/v1/mcp-servers/", json={"server_name": "same", "config": config}).status_code == 409
        rename = {"server_name": "same", "config": {"mcp_server_type": "sse"}}
        assert mcp_http.patch(f"/v1/mcp-servers/{other['id']}", json=rename).status_code == 409
        retype = {"config": {"mcp_server_type": "streamable_http", "server_url": "https://mcp.invalid/mcp"}}
        assert mcp_http.patch(f"/v1/mcp-servers/{first['id']}", json=retype).status_code == 409
        assert {s["server_name"] for s in mcp_http.get("/v1/mcp-servers/").json()} == {"same", "other"}

    def test_bad_bodies_are_4xx(self, mcp_http: httpx.Client) -> None:
        for body in (
            {"server_name": "x", "config": {"mcp_server_type": "stdio"}},
            {"server_name": "x", "config": {"mcp_server_type": "gopher", "server_url": "https://a.example"}},
            {"config": {"mcp_server_type": "sse", "server_url": "https://a.example"}},
            {"server_name": "", "config": {"mcp_server_type": "sse", "server_url": "https://a.example"}},
        ):
            assert 400 <= mcp_http.post("/v1/mcp-servers/", json=body).status_code < 500, body


def _legacy(config: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in config.items() if k != "mcp_server_type"}
    return {**out, "type": config["mcp_server_type"]}


class TestCredentials:
    def test_secrets_are_sealed_masked_and_still_used(
        self,
        mcp_client: Letta,
        mcp_http: httpx.Client,
        http_demo: HttpDemo,
        pg_uri: str,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        monkeypatch.setenv(LEAK_VAR, "server-SECRET-4")
        config = {
            "mcp_server_type": "streamable_http",
            "server_url": http_demo.streamable_http,
            "auth_token": "tok-SECRET-1",
            "custom_headers": {"X-Api-Key": "hdr-SECRET-2"},
        }
        http_server = mcp_client.mcp_servers.create(server_name="creds-http", config=config)
        stdio = mcp_client.mcp_servers.create(
            server_name="creds-stdio", config=stdio_config("--no-tools", "--extras", env={"DEMO_KEY": "env-SECRET-3"})
        )
        bodies = [
            mcp_http.get(f"/v1/mcp-servers/{http_server.id}").text,
            mcp_http.get(f"/v1/mcp-servers/{stdio.id}").text,
            mcp_http.get("/v1/mcp-servers/").text,
            mcp_http.get("/v1/tools/mcp/servers").text,
        ]
        for body in bodies:
            assert "SECRET" not in body
        shown = mcp_http.get(f"/v1/mcp-servers/{http_server.id}").json()
        assert shown["auth_header"] == "Authorization" and shown["custom_headers"] == {"X-Api-Key": "********"}
        assert mcp_http.get(f"/v1/mcp-servers/{stdio.id}").json()["env"] == {"DEMO_KEY": "********"}
        stored = _stored_secrets(pg_uri)
        assert stored and all(v.startswith("fernet:") and "SECRET" not in v for v in stored)
        # The plaintext reaches the servers: the headers over HTTP, the environment over stdio.
        tools = _tools(mcp_client, http_server.id)
        seen = json.loads(
            mcp_client.mcp_servers.tools.run(tools["whoami"].id, mcp_server_id=http_server.id).func_return
        )
        assert seen["authorization"] == "Bearer tok-SECRET-1" and seen["x-api-key"] == "hdr-SECRET-2"
        env_tool = _tools(mcp_client, stdio.id)["creds-stdio__read_env"]  # "read_env" is the HTTP server's
        result = mcp_client.mcp_servers.tools.run(env_tool.id, mcp_server_id=stdio.id, args={"name": "DEMO_KEY"})
        assert result.func_return == "env-SECRET-3"
        # memlet's own environment does not reach a stdio server (the SDK passes only HOME, PATH, ... and `env`).
        leak = mcp_client.mcp_servers.tools.run(env_tool.id, mcp_server_id=stdio.id, args={"name": LEAK_VAR})
        assert leak.func_return == "<unset>"
        # Sending the masked values back keeps the stored secrets.
        update = {
            "mcp_server_type": "streamable_http",
            "server_url": http_demo.streamable_http,
            **{k: shown[k] for k in ("auth_token", "custom_headers")},
        }
        assert mcp_http.patch(f"/v1/mcp-servers/{http_server.id}", json={"config": update}).status_code == 200
        seen = json.loads(
            mcp_client.mcp_servers.tools.run(tools["whoami"].id, mcp_server_id=http_server.id).func_return
        )
        assert seen["authorization"] == "Bearer tok-SECRET-1" and seen["x-api-key"] == "hdr-SECRET-2"


def _stored_secrets(pg_uri: str) -> list[str]:
    import asyncio

    async def read() -> list[str]:
        engine = create_async_engine(async_url(pg_uri))
        async with engine.connect() as conn:
            rows = await conn.execute(text("SELECT auth_token_enc, custom_headers_enc, env_enc FROM mcp_servers"))
            values = [v for row in rows for v in row if v is not None]
        await engine.dispose()
        return values

    return asyncio.run(read())


__all__ += ["ENCRYPTION_KEY"]
