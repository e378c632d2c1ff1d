"""Letta-MCP-server (oculairmedia/Letta-MCP-server), a Node MCP server self-hosters put in front of Letta, against
memlet.

It turns each MCP tool call into raw axios requests on `${LETTA_BASE_URL}/v1` with `X-BARE-PASSWORD: password <pw>`
and `Authorization: Bearer <pw>`, and reads the JSON (or, for `prompt_agent`, the SSE text of a non-token stream, from
which it keeps the first `assistant_message`'s `content`). Several tools also send a `user_id` header holding an
*agent* id ("for authorization"): Letta 0.16.8 refuses any `user_id` that is not `user-<uuid4>` with a 400 before
the route runs, so those calls fail against Letta too, and the program shows the server's `detail` to the model.
The tests below replay its requests byte for byte with httpx (paths with and without trailing slashes as it sends
them).
"""

import json
from typing import Any

import httpx

from tests.api.mcp_fixtures import mcp_client, mcp_http, mcp_server, stdio_config
from tests.mock_llm import MockLLM, Reply

__all__ = ["mcp_client", "mcp_http", "mcp_server"]

PASSWORD_HEADERS = {"X-BARE-PASSWORD": "password pw", "Authorization": "Bearer pw", "Accept": "application/json"}

# `create_agent`'s body, with its defaults (model and embedding handles plus a raw llm_config and unknown keys).
CREATE_AGENT = {
    "name": "mcp-agent",
    "description": "agent made through MCP",
    "agent_type": "memgpt_agent",
    "model": "openai/gpt-4",
    "llm_config": {
        "model": "gpt-4",
        "model_endpoint_type": "openai",
        "context_window": 16000,
        "max_tokens": 1000,
        "temperature": 0.7,
        "frequency_penalty": 0.5,
        "presence_penalty": 0.5,
        "functions_config": {"allow": True, "functions": []},
    },
    "embedding": "openai/text-embedding-ada-002",
    "parameters": {"context_window": 16000, "max_tokens": 1000, "temperature": 0.7},
    "core_memory": {},
}

DICE = '''def roll_dice(sides: int) -> int:
    """Roll a die.

    Args:
        sides: number of sides

    Returns:
        int: the roll
    """
    return 4
'''


def create_agent(http: httpx.Client) -> dict[str, Any]:
    response = http.post("/v1/agents", json=CREATE_AGENT, headers=PASSWORD_HEADERS)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def first_assistant_text(sse: str) -> str | None:
    """What `prompt_agent` keeps: the first `assistant_message` among the `data: ` lines."""
    for line in sse.split("\n"):
        if line.strip().startswith("data: "):
            try:
                event = json.loads(line[6:])
            except json.JSONDecodeError:
                continue
            if event.get("message_type") == "assistant_message" and event.get("content"):
                return str(event["content"])
    return None


def test_a_user_id_header_holding_an_agent_id_is_refused_with_letta_s_message(http: httpx.Client) -> None:
    agent_id = create_agent(http)["id"]
    # `create_agent` then reads the agent back with `user_id: <agent id>`; `attach_memory_block`, `read_memory_block`,
    # `list_memory_blocks` and `upload_tool` send the same header (when given an agent id).
    as_agent = {**PASSWORD_HEADERS, "user_id": agent_id}
    expected = {
        "detail": f"INVALID_ARGUMENT: Invalid user ID format: {agent_id}. Expected format: 'user-<uuid4>'",
    }
    for method, path in [
        ("GET", f"/v1/agents/{agent_id}"),
        ("GET", f"/v1/agents/{agent_id}/core-memory/blocks?templates_only=false"),
        ("GET", "/v1/tools"),
        ("POST", "/v1/blocks"),
    ]:
        body = {"label": "notes", "value": "v"} if method == "POST" else None
        response = http.request(method, path, headers=as_agent, json=body)
        assert (response.status_code, response.json()) == (400, expected), path
    # Letta checks the header on every route that takes it, these too (before anything else).
    step = "step-123e4567-e89b-42d3-8456-426614174000"
    tool_run = {"source_code": 'def f() -> int:\n    """F."""\n    return 1\n', "args": {}}
    for method, path, body in [
        ("POST", "/v1/tools/run", tool_run),
        ("GET", f"/v1/steps/{step}/trace", None),
        ("GET", f"/v1/telemetry/{step}", None),
        (
            "PATCH",
            f"/v1/agents/{agent_id}/messages/message-{step[5:]}",
            {"message_type": "user_message", "content": "x"},
        ),
        (
            "POST",
            "/v1/tools/mcp/servers/test",
            {"server_name": "x", "type": "sse", "server_url": "http://127.0.0.1:9/sse"},
        ),
    ]:
        response = http.request(method, path, headers=as_agent, json=body)
        assert (response.status_code, response.json()) == (400, expected), path
    # Without it (the other tools), the same agent reads fine.
    assert http.get(f"/v1/agents/{agent_id}", headers=PASSWORD_HEADERS).json()["name"] == "mcp-agent"


def test_its_agent_memory_and_tool_calls_work_as_against_letta(http: httpx.Client, mock_llm: MockLLM) -> None:
    h = PASSWORD_HEADERS
    agent = create_agent(http)
    agent_id = agent["id"]
    assert agent["llm_config"]["model"] == "gpt-4" and agent["llm_config"]["context_window"] == 16000
    # list_agents (no trailing slash) keeps id, name and description.
    listed = http.get("/v1/agents", headers=h).json()
    assert [(a["id"], a["name"], a["description"]) for a in listed] == [
        (agent_id, "mcp-agent", "agent made through MCP")
    ]

    # prompt_agent: a non-token stream, read as text.
    mock_llm.script(Reply.tool_call("send_message", {"message": "Hello from the agent"}))
    body = {"messages": [{"role": "user", "content": "hi there"}], "stream_steps": False, "stream_tokens": False}
    streamed = http.post(f"/v1/agents/{agent_id}/messages/stream", json=body, headers=h)
    assert streamed.status_code == 200
    assert first_assistant_text(streamed.text) == "Hello from the agent"

    # create_memory_block (`name` is not a block field: ignored, as Letta), update, then attach_memory_block.
    block = {"name": "notes", "label": "notes", "value": "some notes", "metadata": {"type": "notes", "version": "1.0"}}
    created = http.post("/v1/blocks", json=block, headers=h)
    assert created.status_code == 200 and "name" not in created.json()
    block_id = created.json()["id"]
    listed_blocks = http.get("/v1/blocks", params={"templates_only": "false", "label": "notes"}, headers=h).json()
    assert [b["id"] for b in listed_blocks] == [block_id]
    patched = http.patch(f"/v1/blocks/{block_id}", json={"value": "new notes", "metadata": {"v": 2}}, headers=h)
    assert (patched.json()["value"], patched.json()["metadata"]) == ("new notes", {"v": 2})
    assert (
        http.patch(f"/v1/agents/{agent_id}/core-memory/blocks/attach/{block_id}", json={}, headers=h).status_code == 200
    )
    core = http.get(f"/v1/agents/{agent_id}/core-memory/blocks", headers=h).json()
    assert [(b["label"], b["value"]) for b in core] == [("notes", "new notes")]

    # upload_tool: delete a tool of the same name, create it again, attach it.
    tool = {"source_code": DICE, "description": "Roll a die", "tags": ["custom"], "source_type": "python"}
    first = http.post("/v1/tools", json=tool, headers=h).json()
    assert http.delete(f"/v1/tools/{first['id']}", headers=h).status_code == 200
    second = http.post("/v1/tools", json=tool, headers=h).json()
    assert (second["name"], second["tool_type"]) == ("roll_dice", "custom")
    assert http.patch(f"/v1/agents/{agent_id}/tools/attach/{second['id']}", json={}, headers=h).status_code == 200
    assert "roll_dice" in [t["name"] for t in http.get(f"/v1/agents/{agent_id}/tools", headers=h).json()]

    # Passages: create, search, delete. Letta 0.16.8 has no PATCH for them: modify_passage ends on a 405 there too.
    inserted = http.post(f"/v1/agents/{agent_id}/archival-memory", json={"text": "The sky is blue"}, headers=h).json()
    assert [p["text"] for p in inserted] == ["The sky is blue"]
    passage_id = inserted[0]["id"]
    query = {"search": "sky", "limit": 5, "ascending": "false"}
    found = http.get(f"/v1/agents/{agent_id}/archival-memory", params=query, headers=h).json()
    assert [p["id"] for p in found] == [passage_id]
    url = f"/v1/agents/{agent_id}/archival-memory/{passage_id}"
    assert http.patch(url, json={"text": "x"}, headers=h).status_code == 405
    assert http.delete(url, headers=h).status_code == 200

    # get_agent_summary's other reads.
    assert http.get(f"/v1/agents/{agent_id}/sources", headers=h).json() == []

    # clone_agent / import_agent: export, then a multipart import whose options ride in the query (Letta reads
    # them from the form, so they are ignored: the name gets "_copy"); the answer lists the new ids.
    exported = http.get(f"/v1/agents/{agent_id}/export", headers=h)
    assert exported.status_code == 200
    files = {"file": ("agent_clone.json", exported.content, "application/json")}
    params = {"append_copy_suffix": "false", "override_existing_tools": "true"}
    imported = http.post("/v1/agents/import", files=files, params=params, headers=h)
    assert imported.status_code == 200 and list(imported.json()) == ["agent_ids"]
    (new_id,) = imported.json()["agent_ids"]
    assert http.get(f"/v1/agents/{new_id}", headers=h).json()["name"] == "mcp-agent_copy"

    # bulk_delete_agents: the `name` filter is an exact match.
    assert http.get("/v1/agents/", params={"name": "mcp-agent"}, headers=h).json()[0]["id"] == agent_id
    assert http.get("/v1/agents/", params={"name": "mcp"}, headers=h).json() == []
    for gone in (agent_id, new_id):
        assert http.delete(f"/v1/agents/{gone}", headers=h).status_code == 200
    assert http.get("/v1/agents", headers=h).json() == []


def test_its_mcp_tools_list_register_and_attach_by_server_name(mcp_http: httpx.Client) -> None:
    h = PASSWORD_HEADERS
    config = stdio_config()
    server = {"server_name": "demo", "type": "stdio", "command": config["command"], "args": config["args"]}
    assert mcp_http.put("/v1/tools/mcp/servers", json=server).status_code == 200
    agent_id = mcp_http.post("/v1/agents", json=CREATE_AGENT, headers=h).json()["id"]
    # list_mcp_servers: an object keyed by server name; list_mcp_tools_by_server: name, description, inputSchema.
    servers = mcp_http.get("/v1/tools/mcp/servers", headers=h).json()
    assert list(servers) == ["demo"] and servers["demo"]["server_name"] == "demo"
    listed = {t["name"]: t for t in mcp_http.get("/v1/tools/mcp/servers/demo/tools", headers=h).json()}
    assert listed["echo"]["description"] == "Echo a message back."
    assert listed["echo"]["inputSchema"]["required"] == ["message"]
    # attach_tool by an MCP tool name: register it (POST with an empty body), then attach the returned id.
    registered = mcp_http.post("/v1/tools/mcp/servers/demo/echo", json={}, headers=h)
    assert registered.status_code == 200
    tool = registered.json()
    assert (tool["name"], tool["tool_type"]) == ("echo", "external_mcp")
    attached = mcp_http.patch(f"/v1/agents/{agent_id}/tools/attach/{tool['id']}", json={}, headers=h)
    assert attached.status_code == 200 and "echo" in [t["name"] for t in attached.json()["tools"]]
    # A name the server does not have: memlet answers 404 naming it (Letta's route returned nothing: a 500).
    missing = mcp_http.post("/v1/tools/mcp/servers/demo/no_such_tool", json={}, headers=h)
    assert (missing.status_code, missing.json()) == (
        404,
        {"detail": "Tool 'no_such_tool' not found on MCP server 'demo'"},
    )
    unknown = mcp_http.get("/v1/tools/mcp/servers/nope/tools", headers=h)
    assert unknown.status_code == 404
