"""JSON a user stores comes back, and reaches the model, with its keys in the order written, as in Letta 0.16.8.

Letta keeps these documents in `json` columns (its `JSON` and custom JSON column types), which store the text as
written; Postgres `jsonb` sorts an object's keys (shorter first), so a program printing or diffing an agent's
`metadata`, a block's, a tool rule's `child_output_mapping`, a compaction schema or an identity's property saw them
reshuffled, and a custom tool reading `agent_state.metadata` handed the model the reshuffled object.
"""

import json
from typing import Any

import httpx
from letta_client import Letta

from tests.api.mcp_fixtures import mcp_client, mcp_server, stdio_config
from tests.mock_llm import MockLLM, Reply

__all__ = ["mcp_client", "mcp_server"]

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"

# Longest keys first, nested too: jsonb would give {"a", "mid", "zebra_long_key"} and {"b", "yy_long"}.
ORDERED: dict[str, Any] = {"zebra_long_key": 1, "mid": {"yy_long": True, "b": 2}, "a": "x"}
ORDERED_TEXT = json.dumps(ORDERED)


def same_order(value: Any) -> bool:
    """`value` is ORDERED with every object's keys in ORDERED's order (dict equality alone ignores order)."""
    return json.dumps(value) == ORDERED_TEXT


MAPPING = {"very_long_output_value": "send_message", "no": "memory_insert"}
COMPACTION_MODEL_SETTINGS = {
    "provider_type": "openai",
    "response_format": {"type": "json_schema", "json_schema": {"name": "summary", "schema": ORDERED}},
}

SHOW_STATE = '''def show_state(agent_state: "AgentState") -> str:
    """Show the agent's and its notes block's metadata.

    Returns:
        str: Both, as JSON.
    """
    import json

    notes = agent_state.memory.get_block("notes")
    return json.dumps({"agent": agent_state.metadata, "block": notes.metadata})
'''


def test_agent_and_block_metadata_and_tool_rules_keep_their_key_order(http: httpx.Client) -> None:
    body = {
        "model": MODEL,
        "embedding": EMBEDDING,
        "metadata": ORDERED,
        "memory_blocks": [{"label": "notes", "value": "n", "metadata": ORDERED}],
        "tools": ["send_message", "memory_insert"],
        "tool_rules": [{"type": "conditional", "tool_name": "memory_insert", "child_output_mapping": MAPPING}],
        "compaction_settings": {"model": MODEL, "model_settings": COMPACTION_MODEL_SETTINGS},
    }
    created = http.post("/v1/agents/", json=body)
    assert created.status_code == 200, created.text
    agent_id = created.json()["id"]
    for agent in (created.json(), http.get(f"/v1/agents/{agent_id}").json()):
        assert same_order(agent["metadata"])
        assert same_order(next(b for b in agent["memory"]["blocks"] if b["label"] == "notes")["metadata"])
        rule = next(r for r in agent["tool_rules"] if r["type"] == "conditional")
        assert list(rule["child_output_mapping"]) == list(MAPPING)
        compaction_format = agent["compaction_settings"]["model_settings"]["response_format"]
        assert same_order(compaction_format["json_schema"]["schema"])
    listed = http.get("/v1/agents/", params={"include": ["agent.blocks"]}).json()
    assert same_order(next(a for a in listed if a["id"] == agent_id)["metadata"])
    block = next(b for b in http.get(f"/v1/agents/{agent_id}/core-memory/blocks").json() if b["label"] == "notes")
    assert same_order(block["metadata"])

    updated = http.patch(f"/v1/agents/{agent_id}", json={"metadata": {"b_long_second": 2, "a": 1}}).json()
    assert list(updated["metadata"]) == ["b_long_second", "a"]
    assert list(http.get(f"/v1/agents/{agent_id}").json()["metadata"]) == ["b_long_second", "a"]


def test_standalone_blocks_keep_their_metadata_order(client: Letta, http: httpx.Client) -> None:
    block = client.blocks.create(label="facts", value="v", metadata=ORDERED)
    assert same_order(http.get(f"/v1/blocks/{block.id}").json()["metadata"])
    http.patch(f"/v1/blocks/{block.id}", json={"metadata": {"b_long_second": 2, "a": 1}})
    assert list(http.get(f"/v1/blocks/{block.id}").json()["metadata"]) == ["b_long_second", "a"]


def test_a_custom_tool_hands_the_model_the_metadata_in_its_order(
    client: Letta, http: httpx.Client, mock_llm: MockLLM
) -> None:
    tool = client.tools.upsert(source_code=SHOW_STATE)
    agent = client.agents.create(
        model=MODEL,
        embedding=EMBEDDING,
        metadata=ORDERED,
        memory_blocks=[{"label": "notes", "value": "n", "metadata": ORDERED}],
        tool_ids=[tool.id],
    )
    mock_llm.reset()
    mock_llm.script(Reply.tool_call("show_state", {}), Reply.text("done"))
    client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "show"}])
    returned = next(m for m in mock_llm.requests[1]["messages"] if m["role"] == "tool")
    shown = json.loads(json.loads(returned["content"])["message"])
    assert same_order(shown["agent"]) and same_order(shown["block"])


def test_tool_metadata_keeps_its_key_order(client: Letta, http: httpx.Client) -> None:
    tool = client.tools.upsert(source_code=SHOW_STATE)
    patched = http.patch(f"/v1/tools/{tool.id}", json={"metadata_": ORDERED})
    assert patched.status_code == 200, patched.text
    assert same_order(patched.json()["metadata_"])
    assert same_order(http.get(f"/v1/tools/{tool.id}").json()["metadata_"])


def test_identity_properties_keep_their_key_order(http: httpx.Client) -> None:
    prop = {"key": "prefs", "value": ORDERED, "type": "json"}
    body = {"identifier_key": "order-user", "name": "u", "identity_type": "user", "properties": [prop]}
    created = http.post("/v1/identities/", json=body)
    assert created.status_code == 200, created.text
    identity_id = created.json()["id"]
    assert same_order(http.get(f"/v1/identities/{identity_id}").json()["properties"][0]["value"])
    http.put(f"/v1/identities/{identity_id}/properties", json=[{**prop, "key": "other"}])
    assert same_order(http.get(f"/v1/identities/{identity_id}").json()["properties"][0]["value"])


def test_folder_and_passage_metadata_keep_their_key_order(http: httpx.Client) -> None:
    folder = http.post("/v1/folders/", json={"name": "order-folder", "embedding": EMBEDDING, "metadata": ORDERED})
    assert folder.status_code == 200, folder.text
    assert same_order(http.get(f"/v1/folders/{folder.json()['id']}").json()["metadata"])

    archive = http.post("/v1/archives/", json={"name": "order-archive", "embedding": EMBEDDING}).json()
    added = http.post(f"/v1/archives/{archive['id']}/passages", json={"text": "hello", "metadata": ORDERED})
    assert added.status_code == 200, added.text
    found = http.post("/v1/passages/search", json={"archive_id": archive["id"], "query": "hello"})
    assert found.status_code == 200, found.text
    assert same_order(found.json()[0]["passage"]["metadata"])


EDIT_ARGS = {"file_path": "a.txt", "old_string": "x", "new": "y"}


def test_client_tools_and_their_calls_reach_the_model_in_their_order(client: Letta, mock_llm: MockLLM) -> None:
    """Letta Code sends its tool schemas as `client_tools` each turn (here in a background run); the call it
    approves goes back to the model with its arguments as the model wrote them."""
    agent = client.agents.create(model=MODEL, embedding=EMBEDDING, include_base_tools=False)
    schema = {
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "old_string": {"type": "string"}, "new": {"type": "string"}},
        "required": ["file_path", "old_string", "new"],
    }
    edit = {"name": "Edit", "description": "Edit a file", "parameters": schema}
    mock_llm.reset()
    mock_llm.script(Reply.tool_call("Edit", EDIT_ARGS, id="call_edit"), Reply.text("edited"))
    stream = client.agents.messages.stream(
        agent.id, messages=[{"role": "user", "content": "edit"}], client_tools=[edit], background=True
    )
    for _ in stream:
        pass
    sent = next(t["function"] for t in mock_llm.requests[0]["tools"] if t["function"]["name"] == "Edit")
    assert list(sent["parameters"]["properties"]) == list(EDIT_ARGS)
    asked = [m for m in client.agents.messages.list(agent.id).items if m.message_type == "approval_request_message"]
    assert list(json.loads(asked[0].tool_call.arguments)) == list(EDIT_ARGS)  # type: ignore[union-attr]

    result = {"type": "tool", "tool_call_id": "call_edit", "tool_return": "done", "status": "success"}
    client.agents.messages.create(agent.id, messages=[{"type": "approval", "approvals": [result]}], client_tools=[edit])
    call = next(m for m in mock_llm.requests[1]["messages"] if m.get("tool_calls"))["tool_calls"][0]
    assert list(json.loads(call["function"]["arguments"])) == list(EDIT_ARGS)


def test_mcp_tools_keep_the_servers_schema_order_and_letta_s_metadata_order(mcp_client: Letta) -> None:
    """The demo server's `create_person(person: Person)`, Person's address an `Address(street, city, zip_code)`."""
    server = mcp_client.mcp_servers.create(server_name="ordered", config=stdio_config())  # type: ignore[arg-type]
    tool = next(t for t in mcp_client.mcp_servers.tools.list(server.id) if t.name == "create_person")
    person = (tool.json_schema or {})["parameters"]["properties"]["person"]
    assert list(person["properties"]) == ["name", "age", "address"]
    address = next(m for m in person["properties"]["address"]["anyOf"] if m.get("type") == "object")
    assert list(address["properties"]) == ["street", "city", "zip_code"]
    assert list((tool.metadata or {})["mcp"])[:2] == ["server_name", "server_id"]
