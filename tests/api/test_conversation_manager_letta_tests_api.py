"""What Letta 0.16.8's `tests/managers/test_conversation_manager.py` asserts that a user sees through the API:
delete and its leftovers, the `last_message_at` sort, forks' model and shared rows, and how rows are listed."""

from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.api.test_conversations_api import make_agent, send
from tests.mock_llm import MockLLM, Reply


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def create(http: httpx.Client, agent_id: str, **body: Any) -> dict[str, Any]:
    response = http.post("/v1/conversations/", params={"agent_id": agent_id}, json=body)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_a_deleted_conversation_is_gone_with_its_rows_and_isolated_blocks(client: Letta, http: httpx.Client) -> None:
    agent = make_agent(client)
    gone = create(http, agent.id, summary="alpha deleted", isolated_block_labels=["human"])
    kept = create(http, agent.id, summary="alpha kept")
    [system_id] = gone["in_context_message_ids"]
    [copy_id] = gone["isolated_block_ids"]
    assert http.delete(f"/v1/conversations/{gone['id']}").status_code == 200

    assert http.delete(f"/v1/conversations/{gone['id']}").status_code == 404  # a second delete
    assert http.patch(f"/v1/conversations/{gone['id']}", json={"summary": "x"}).status_code == 404
    found = http.get("/v1/conversations/", params={"agent_id": agent.id, "summary_search": "alpha"}).json()
    assert [c["id"] for c in found] == [kept["id"]]
    assert http.get(f"/v1/blocks/{copy_id}").status_code == 404  # the isolated copy is deleted with it
    assert http.get(f"/v1/messages/{system_id}").status_code == 404  # and so is its own system message
    assert http.get(f"/v1/messages/{kept['in_context_message_ids'][0]}").status_code == 200


def test_last_message_at_sorts_with_nulls_last_both_ways(client: Letta, http: httpx.Client) -> None:
    agent = make_agent(client)
    create(http, agent.id, summary="null")  # never had a message
    old = create(http, agent.id, summary="old")
    new = create(http, agent.id, summary="new")
    http.patch(f"/v1/conversations/{old['id']}", json={"last_message_at": "2026-01-01T00:00:00Z"})
    http.patch(f"/v1/conversations/{new['id']}", json={"last_message_at": "2026-02-01T00:00:00Z"})

    def listed(order: str, **extra: Any) -> list[str]:
        params = {"agent_id": agent.id, "order_by": "last_message_at", "order": order, **extra}
        return [c["summary"] for c in http.get("/v1/conversations/", params=params).json()]

    assert listed("asc") == ["old", "new", "null"]
    assert listed("desc") == ["new", "old", "null"]
    assert listed("asc", after=old["id"]) == ["new", "null"]
    assert listed("desc", after=new["id"]) == ["old", "null"]


def test_a_fork_keeps_the_model_and_outlives_its_source(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = make_agent(client)
    settings = {"provider_type": "openai", "temperature": 0.5}
    source = create(http, agent.id, summary="source", model="openai/gpt-4o-mini", model_settings=settings)
    mock_llm.script(Reply.text("hi there"))
    send(http, source["id"], "hello from source")
    fork = http.post(f"/v1/conversations/{source['id']}/fork").json()
    assert fork["summary"] is None and fork["model"] == "openai/gpt-4o-mini"
    assert fork["model_settings"]["temperature"] == 0.5
    # The fork has its own system message and shares the rest.
    assert fork["in_context_message_ids"][0] != source["in_context_message_ids"][0]
    shared = client.conversations.retrieve(source["id"]).in_context_message_ids[1:]
    assert fork["in_context_message_ids"][1:] == shared

    assert http.delete(f"/v1/conversations/{source['id']}").status_code == 200
    assert all(http.get(f"/v1/messages/{m}").status_code == 200 for m in shared)
    rows = http.get(f"/v1/conversations/{fork['id']}/messages", params={"order": "asc"}).json()
    assert [r["message_type"] for r in rows] == ["system_message", "user_message", "assistant_message"]
    assert http.post("/v1/conversations/conv-00000000-0000-4000-8000-000000000000/fork").status_code == 404


def test_a_memgpt_agents_thoughts_list_as_reasoning(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    """Compatibility note: Letta's conversation list shows them as `assistant_message` for every agent type."""
    agent = client.agents.create(
        model="openai/gpt-4o-mini", embedding="openai/text-embedding-3-small", agent_type="memgpt_v2_agent"
    )
    conv = client.conversations.create(agent_id=agent.id)
    mock_llm.script(Reply.tool_call("send_message", {"thinking": "Greet them.", "message": "hello"}))
    send(http, conv.id, "hi")
    rows = http.get(f"/v1/conversations/{conv.id}/messages", params={"order": "asc"}).json()
    assert [(r["message_type"], r.get("reasoning") or r.get("content")) for r in rows[2:]] == [
        ("reasoning_message", "Greet them."),
        ("assistant_message", "hello"),
    ]
