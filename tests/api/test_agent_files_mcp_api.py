"""Issue #10 items 1-2 with MCP: agent files carry the MCP servers of the agent's MCP tools, never a credential;
import reuses or creates them without credentials in the importing organization and links the tools by id, so they
run; a stdio server is created only while stdio is allowed, and otherwise its tools fail naming it."""

import asyncio
import json
import uuid
from typing import Any

import httpx
from letta_client import Letta
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from memlet.db.engine import async_url
from tests.api.agent_files_support import export
from tests.api.mcp_fixtures import HttpDemo, http_demo, mcp_client, mcp_http, mcp_server, stdio_config
from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply

__all__ = ["http_demo", "mcp_client", "mcp_http", "mcp_server"]
MODEL = "openai/gpt-4o-mini"
SECRETS = ("tok-secret-1", "hdr-secret-2", "env-secret-3")


def _new_org(pg_uri: str) -> str:
    """A second organization with one user; returns the user id (the `user_id` header selects it)."""
    org_id, user_id = f"org-{uuid.uuid4()}", f"user-{uuid.uuid4()}"

    async def run() -> None:
        engine = create_async_engine(async_url(pg_uri))
        async with engine.begin() as conn:
            await conn.execute(
                text("INSERT INTO organizations (id, name, privileged_tools) VALUES (:id, 'other', false)"),
                {"id": org_id},
            )
            await conn.execute(
                text("INSERT INTO users (id, organization_id, name) VALUES (:id, :org, 'other')"),
                {"id": user_id, "org": org_id},
            )
        await engine.dispose()

    asyncio.run(run())
    return user_id


def _other(server: LiveServer, pg_uri: str) -> tuple[Letta, httpx.Client]:
    headers = {"user_id": _new_org(pg_uri)}
    return (
        Letta(base_url=server.base_url, max_retries=0, timeout=60, default_headers=headers),
        httpx.Client(base_url=server.base_url, timeout=60, headers=headers),
    )


def _agent_with_mcp_tools(client: Letta, demo: HttpDemo) -> tuple[str, dict[str, Any]]:
    """An agent using `echo` of an HTTP server (token and header set) and `add` of a stdio server (env set)."""
    http_config = {
        "mcp_server_type": "streamable_http",
        "server_url": demo.streamable_http,
        "auth_token": SECRETS[0],
        "custom_headers": {"X-Key": SECRETS[1]},
    }
    web = client.mcp_servers.create(server_name="demo-http", config=http_config)
    local = client.mcp_servers.create(server_name="demo-stdio", config=stdio_config(env={"API_KEY": SECRETS[2]}))
    echo = {t.name: t.id for t in client.mcp_servers.tools.list(web.id)}["echo"]
    add = next(t.id for t in client.mcp_servers.tools.list(local.id) if t.metadata["mcp"]["tool_name"] == "add")
    agent = client.agents.create(name="mcp-af", model=MODEL, include_base_tools=False, tool_ids=[echo, add])
    return agent.id, {"http": web, "stdio": local}


def _import(client: Letta, document: dict[str, Any]) -> str:
    (agent_id,) = client.agents.import_file(
        file=("agent.af", json.dumps(document).encode(), "application/json"), model=MODEL
    ).agent_ids
    return agent_id


def _mcp_part(document: dict[str, Any]) -> dict[str, Any]:
    """The MCP servers and tools of a file apart from ids: a tool's server id read as that server's name."""
    names = {s["id"]: s["server_name"] for s in document["mcp_servers"]}
    servers = sorted(json.dumps({k: v for k, v in s.items() if k != "id"}) for s in document["mcp_servers"])
    tools = []
    for t in document["tools"]:
        meta = t["metadata_"]["mcp"]
        tools.append((t["name"], t["tool_type"], t["tags"], {**meta, "server_id": names[meta["server_id"]]}))
    return {"servers": servers, "tools": sorted(tools, key=json.dumps)}


def test_export_lists_the_agents_mcp_servers_without_credentials(
    mcp_client: Letta, mcp_http: httpx.Client, http_demo: HttpDemo
) -> None:
    agent_id, servers = _agent_with_mcp_tools(mcp_client, http_demo)
    document = export(mcp_http, agent_id)
    dumped = json.dumps(document)
    assert not [s for s in SECRETS if s in dumped]
    assert "X-Key" not in dumped and "API_KEY" not in dumped
    by_name = {s["server_name"]: s for s in document["mcp_servers"]}
    assert set(by_name) == {"demo-http", "demo-stdio"}
    web, local = by_name["demo-http"], by_name["demo-stdio"]
    assert web["server_type"] == "streamable_http" and web["server_url"] == http_demo.streamable_http
    assert web["stdio_config"] is None and web["id"].startswith("mcp_server-")
    assert local["server_type"] == "stdio" and local["server_url"] is None
    assert local["stdio_config"] == {
        "server_name": "demo-stdio",
        "type": "stdio",
        "command": stdio_config()["command"],
        "args": stdio_config()["args"],
    }
    tools = {t["name"]: t for t in document["tools"]}
    assert tools["echo"]["metadata_"]["mcp"] == {
        "server_id": web["id"],
        "server_name": "demo-http",
        "tool_name": "echo",
    }
    assert tools["echo"]["tags"] == ["mcp:demo-http"]
    (add,) = [t for t in document["tools"] if t["metadata_"]["mcp"]["tool_name"] == "add"]
    assert add["metadata_"]["mcp"]["server_id"] == local["id"]
    assert servers["http"].id not in dumped and servers["stdio"].id not in dumped


def test_import_into_a_fresh_org_creates_the_servers_and_the_tool_runs(
    mcp_client: Letta,
    mcp_http: httpx.Client,
    mcp_server: LiveServer,
    pg_uri: str,
    http_demo: HttpDemo,
    mock_llm: MockLLM,
) -> None:
    agent_id, _ = _agent_with_mcp_tools(mcp_client, http_demo)
    first = export(mcp_http, agent_id)
    other, other_http = _other(mcp_server, pg_uri)
    with other_http:
        assert other.mcp_servers.list() == []
        copy_id = _import(other, first)
        created = {s.server_name: s for s in other.mcp_servers.list()}
        assert set(created) == {"demo-http", "demo-stdio"}
        assert created["demo-http"].auth_token is None and created["demo-http"].custom_headers is None
        assert created["demo-stdio"].env is None
        assert {s.id for s in mcp_client.mcp_servers.list()}.isdisjoint(s.id for s in created.values())
        tools = {t.name: t for t in other.agents.tools.list(copy_id, limit=100).items}
        assert tools["echo"].metadata["mcp"]["server_id"] == created["demo-http"].id
        assert [t.id for t in other.mcp_servers.tools.list(created["demo-http"].id)] == [tools["echo"].id]

        mock_llm.reset()
        mock_llm.script(Reply.tool_call("echo", {"message": "imported"}), Reply.text("done"))
        response = other.agents.messages.create(copy_id, messages=[{"role": "user", "content": "go"}])
        (result,) = [m for m in response.messages if m.message_type == "tool_return_message"]
        assert result.status == "success" and "Echo: imported" in result.tool_return

        second = export(other_http, copy_id)
        assert _mcp_part(second) == _mcp_part(first)
        # A second import into the same organization reuses the servers by name.
        _import(other, second)
        assert len(other.mcp_servers.list()) == 2


def _stdio_document() -> dict[str, Any]:
    """A file with one agent whose `echo` tool runs on the stdio server `local-tools`."""
    return {
        "agents": [
            {
                "id": "agent-0",
                "name": "stdio-af",
                "agent_type": "memgpt_v2_agent",
                "system": "You are a test agent.",
                "tool_ids": ["tool-0"],
                "block_ids": [],
                "messages": [],
                "in_context_message_ids": [],
            }
        ],
        "groups": [],
        "blocks": [],
        "files": [],
        "sources": [],
        "tools": [
            {
                "id": "tool-0",
                "name": "echo",
                "tool_type": "external_mcp",
                "tags": ["mcp:local-tools"],
                "json_schema": {
                    "name": "echo",
                    "description": "Echo a message back.",
                    "parameters": {
                        "type": "object",
                        "properties": {"message": {"type": "string"}},
                        "required": ["message"],
                    },
                },
                "metadata_": {"mcp": {"server_id": "mcp_server-0", "server_name": "local-tools", "tool_name": "echo"}},
            }
        ],
        "mcp_servers": [
            {
                "id": "mcp_server-0",
                "server_type": "stdio",
                "server_name": "local-tools",
                "server_url": None,
                "stdio_config": {"server_name": "local-tools", "type": "stdio", **stdio_config()},
                "metadata_": {},
            }
        ],
    }


def test_a_stdio_server_with_stdio_off_imports_and_its_tool_fails_naming_it(client: Letta, mock_llm: MockLLM) -> None:
    document = _stdio_document()
    agent_id = _import(client, document)
    assert client.mcp_servers.list() == []
    mock_llm.reset()
    mock_llm.script(Reply.tool_call("echo", {"message": "x"}), Reply.text("ok"))
    response = client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "x"}])
    (result,) = [m for m in response.messages if m.message_type == "tool_return_message"]
    assert result.status == "error"
    assert "stdio MCP server 'local-tools'" in result.tool_return and "MEMLET_MCP_STDIO" in result.tool_return


def test_a_file_never_sets_credentials_nor_changes_an_existing_server(
    mcp_client: Letta, mcp_http: httpx.Client, http_demo: HttpDemo
) -> None:
    kept = mcp_client.mcp_servers.create(
        server_name="keep", config={"mcp_server_type": "sse", "server_url": http_demo.sse, "auth_token": "mine"}
    )
    document = _stdio_document()
    document["mcp_servers"] = [
        {
            "id": "mcp_server-0",
            "server_type": "streamable_http",
            "server_name": "keep",
            "server_url": "http://x.example/",
        },
        {
            "id": "mcp_server-1",
            "server_type": "sse",
            "server_name": "smuggled",
            "server_url": http_demo.sse,
            "token": "file-token",
            "auth_token": "file-token",
            "custom_headers": {"X-Key": "file-header"},
        },
        {
            "id": "mcp_server-2",
            "server_type": "stdio",
            "server_name": "local-tools",
            "stdio_config": {**stdio_config(), "env": {"API_KEY": "file-env"}},
        },
    ]
    document["tools"][0]["metadata_"]["mcp"] = {"server_id": "mcp_server-0", "server_name": "keep", "tool_name": "echo"}
    _import(mcp_client, document)
    servers = {s.server_name: s for s in mcp_client.mcp_servers.list()}
    assert servers["keep"].id == kept.id and servers["keep"].server_url == http_demo.sse
    assert servers["keep"].mcp_server_type == "sse" and servers["keep"].auth_token is not None
    assert servers["smuggled"].auth_token is None and servers["smuggled"].custom_headers is None
    assert servers["local-tools"].env is None
    (tool,) = [t for t in mcp_client.tools.list(name="echo") if t.tool_type == "external_mcp"]
    assert tool.metadata["mcp"]["server_id"] == kept.id


def test_a_bad_server_entry_is_a_400_naming_it_and_creates_nothing(mcp_client: Letta, mcp_http: httpx.Client) -> None:
    for entry, field in (
        ({"server_type": "websocket", "server_url": "https://x.example/"}, "mcp_servers.0.server_type"),
        ({"server_type": "sse"}, "mcp_servers.0.server_url"),
        ({"server_type": "sse", "server_url": "http://169.254.169.254/"}, "mcp_servers.0"),
    ):
        document = _stdio_document()
        document["mcp_servers"] = [{"id": "mcp_server-0", "server_name": "bad", **entry}]
        response = mcp_http.post(
            "/v1/agents/import", files={"file": ("agent.af", json.dumps(document).encode(), "application/json")}
        )
        assert response.status_code == 400 and field in response.json()["detail"], response.text
    assert mcp_client.mcp_servers.list() == [] and mcp_http.get("/v1/agents/count").json() == 0
